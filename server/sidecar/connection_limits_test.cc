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
  const ConnectionLimits limits = SplitDescriptors(Config(3, 2), 1024);
  // 100 attempts, 96 for the process, 3 × 2 warm connections.
  EXPECT_EQ(limits.reserved, 202);
  EXPECT_EQ(limits.admin, 64);
  // 1024 - 202 - 64 left, all of it --listen's.
  EXPECT_EQ(limits.listen, 758);
  EXPECT_EQ(limits.http, 0);
  EXPECT_EQ(limits.read, 0);
}

TEST(ConnectionLimitsTest, DoorsShareWhatIsLeft) {
  ServerConfig config = Config(1, 0);
  config.http_listen = ListenAddress();
  config.read_listen = ListenAddress();
  const ConnectionLimits limits = SplitDescriptors(config, 1024);
  const int64_t left = 1024 - 196 - 64;  // 764
  EXPECT_EQ(limits.http, left / 2);      // 382
  EXPECT_EQ(limits.listen, (left - limits.http) / 2);
  EXPECT_EQ(limits.read, limits.listen);
}

TEST(ConnectionLimitsTest, EachListenerKeepsItsOwnMaximumAndAtLeastOne) {
  ServerConfig config = Config(1, 0);
  config.max_connections = 10;
  EXPECT_EQ(SplitDescriptors(config, 0).listen, 10);  // no descriptor limit
  EXPECT_EQ(SplitDescriptors(config, 1024).listen, 10);
  // Fewer descriptors than the process sets aside: one connection still.
  EXPECT_EQ(SplitDescriptors(config, 100).listen, 1);
}

}  // namespace
}  // namespace tailgate::server
