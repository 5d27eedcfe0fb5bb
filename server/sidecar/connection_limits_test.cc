#include "server/sidecar/connection_limits.h"

#include "gtest/gtest.h"
#include "server/config/server_config.h"

namespace tailgate::server {
namespace {

// One replica set of `replicas` replicas with `preconnect` warm
// connections each.
ServerConfig Config(int replicas, int preconnect) {
  ServerConfig config;
  config.engine.admission.max_attempts = 100;
  hedge::UpstreamConfig upstream;
  upstream.preconnect = preconnect;
  upstream.replicas.resize(replicas);
  config.engine.upstreams.push_back(upstream);
  return config;
}

TEST(ConnectionLimitsTest, ReplicaConnectionsAndTheProcessAreSetAsideFirst) {
  const ConnectionLimits limits = *SplitDescriptors(Config(3, 2), 1024);
  // 100 attempts, 96 for the process, 3 × 2 warm connections.
  EXPECT_EQ(limits.reserved, 202);
  EXPECT_EQ(limits.admin, 64);
  EXPECT_EQ(limits.metrics, 16);
  // 1024 - 202 - 64 - 16 left, all of it --listen's.
  EXPECT_EQ(limits.listen, 742);
  EXPECT_EQ(limits.http, 0);
  EXPECT_EQ(limits.read, 0);
}

TEST(ConnectionLimitsTest, DoorsShareWhatIsLeft) {
  ServerConfig config = Config(1, 0);
  config.http_listen = ListenAddress();
  config.read_listen = ListenAddress();
  const ConnectionLimits limits = *SplitDescriptors(config, 1024);
  const int64_t left = 1024 - 196 - 80;  // 748
  EXPECT_EQ(limits.http, left / 2);      // 374
  EXPECT_EQ(limits.listen, (left - limits.http) / 2);
  EXPECT_EQ(limits.read, limits.listen);
}

TEST(ConnectionLimitsTest, EachListenerKeepsItsOwnMaximum) {
  ServerConfig config = Config(1, 0);
  config.max_connections = 10;
  EXPECT_EQ(SplitDescriptors(config, 0)->listen, 10);  // no descriptor limit
  EXPECT_EQ(SplitDescriptors(config, 1024)->listen, 10);
  // A maximum under the floor is met by a limit that leaves that much.
  EXPECT_EQ(SplitDescriptors(config, 196 + 80 + 10)->listen, 10);
  EXPECT_FALSE(SplitDescriptors(config, 196 + 80 + 9).ok());
}

// 100 attempts and the process's 96 set aside, 64 for --admin and 16 for
// --metrics_listen: --listen needs 16 more, and each door of its own as
// many again.
TEST(ConnectionLimitsTest, ALimitThatLeavesAListenerUnderTheFloorIsAnError) {
  ServerConfig config = Config(1, 0);
  EXPECT_EQ(SplitDescriptors(config, 196 + 80 + 16)->listen, 16);
  const absl::StatusOr<ConnectionLimits> short_one =
      SplitDescriptors(config, 196 + 80 + 15);
  ASSERT_FALSE(short_one.ok());
  EXPECT_EQ(short_one.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(short_one.status().message(),
            "the descriptor limit (RLIMIT_NOFILE 291) leaves 15 client "
            "connections to a read listener once 196 are set aside for "
            "replica connections and the process (--max_attempts + 96, and "
            "--preconnect per replica) and 64 for --admin and 16 for "
            "--metrics_listen; raise it to at least 292 (ulimit -n, or the "
            "container's nofile limit), or lower --max_attempts");

  config.http_listen = ListenAddress();
  config.read_listen = ListenAddress();
  // Three listeners, the HTTP door taking half: 63 over what is set aside
  // leaves 31, 16 and 16.
  EXPECT_TRUE(SplitDescriptors(config, 196 + 80 + 63).ok());
  EXPECT_FALSE(SplitDescriptors(config, 196 + 80 + 62).ok());
  const absl::StatusOr<ConnectionLimits> shared =
      SplitDescriptors(config, 196 + 80 + 47);
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.status().message().find("at least 339"),
            absl::string_view::npos);
}

}  // namespace
}  // namespace tailgate::server
