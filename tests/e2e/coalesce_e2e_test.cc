// Request coalescing through the real binary (--coalesce, over the
// --listen door): 50 concurrent identical reads reach the replica at most
// 3 times, each caller with its own answer; 50 different paths reach it
// 50 times; the savings show in GetStats and on /metrics.

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/testing/http_get.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {
namespace {

using ::tailgate::server::testing::HttpGet;
using ::tailgate::server::testing::HttpReply;

class CoalesceE2eTest : public TailgateE2eTest {
 protected:
  // One replica answering each target with itself after 300 ms, so the
  // reads of a test are all in flight at once; no hedge within that.
  void Start(bool coalesce) {
    AddReplica([](const ReplicaRequest& request) {
      return Body(request.uri, absl::Milliseconds(300));
    });
    std::vector<std::string> flags = {"--hedge_delay=3s", "--timeout=5s"};
    if (coalesce) flags.push_back("--coalesce");
    StartTailgate(flags);
  }

  // Reads each of `paths` on a thread of its own, all at once; EXPECTs
  // each to answer OK with its own path.
  void ReadAtOnce(const std::vector<std::string>& paths) {
    std::vector<grpc::Status> statuses(paths.size());
    std::vector<std::string> bodies(paths.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < paths.size(); ++i) {
      threads.emplace_back([this, &paths, &statuses, &bodies, i] {
        v1::ReadResponse response;
        statuses[i] = Read(paths[i], &response);
        bodies[i] = response.body();
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (size_t i = 0; i < paths.size(); ++i) {
      EXPECT_TRUE(statuses[i].ok()) << i << ": " << statuses[i].error_message();
      EXPECT_EQ(bodies[i], paths[i]) << i;
    }
  }
};

TEST_F(CoalesceE2eTest, FiftyIdenticalReadsReachTheReplicaAtMostThreeTimes) {
  Start(/*coalesce=*/true);
  ReadAtOnce(std::vector<std::string>(50, "/hot?id=7"));
  const int64_t fetches = replicas_[0]->requests_received();
  EXPECT_GE(fetches, 1);
  EXPECT_LE(fetches, 3);

  const v1::GetStatsResponse stats = Stats();
  ASSERT_EQ(stats.upstreams_size(), 1);
  EXPECT_EQ(stats.upstreams(0).requests(), 50u);
  EXPECT_EQ(stats.upstreams(0).coalesced_reads(), 50u - fetches);
  EXPECT_EQ(stats.upstreams(0).fetches_saved(), 50u - fetches);
  absl::StatusOr<HttpReply> metrics =
      HttpGet(tailgate_->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_TRUE(absl::StrContains(
      metrics->body, absl::StrCat("tailgate_coalesced_reads_total{upstream="
                                  "\"\"} ",
                                  50 - fetches, "\n")))
      << metrics->body;
}

TEST_F(CoalesceE2eTest, FiftyDifferentPathsReachTheReplicaFiftyTimes) {
  Start(/*coalesce=*/true);
  std::vector<std::string> paths;
  for (int i = 0; i < 50; ++i) paths.push_back(absl::StrCat("/key/", i));
  ReadAtOnce(paths);
  EXPECT_EQ(replicas_[0]->requests_received(), 50);
  EXPECT_EQ(Stats().upstreams(0).coalesced_reads(), 0u);
}

TEST_F(CoalesceE2eTest, OffWithoutTheFlag) {
  Start(/*coalesce=*/false);
  ReadAtOnce(std::vector<std::string>(10, "/hot"));
  EXPECT_EQ(replicas_[0]->requests_received(), 10);
}

}  // namespace
}  // namespace tailgate::testing
