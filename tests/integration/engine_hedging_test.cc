// The engine's hedging behaviour against real loopback replicas.

#include <string>

#include "gtest/gtest.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

ReplicaResponse Answer(std::string body, absl::Duration delay = absl::ZeroDuration(),
                       int status = 200) {
  ReplicaResponse response;
  response.status = status;
  response.body = std::move(body);
  response.delay = delay;
  return response;
}

class EngineHedgingTest : public EngineFixture {};

TEST_F(EngineHedgingTest, FastPrimaryAnswersWithoutHedge) {
  StartReplicas({Always(Answer("a")), Always(Answer("b"))});
  StartEngine();
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->trace.attempts, 1);
  EXPECT_FALSE(response->trace.hedged);
  EXPECT_EQ(engine_->Snapshot().hedges, 0u);
  EXPECT_EQ(replicas_[0]->requests_received() + replicas_[1]->requests_received(), 1);
}

TEST_F(EngineHedgingTest, SlowPrimaryIsHedgedAndLoserConnectionClosed) {
  StartReplicas({Always(Answer("slow", absl::Seconds(3))),
                 Always(Answer("fast"))});
  StartEngine();
  // Primaries rotate: of two reads, exactly one starts on the slow replica.
  absl::StatusOr<hedge::EngineResponse> first = Read("/x");
  absl::StatusOr<hedge::EngineResponse> second = Read("/x");
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(first->trace.hedged, second->trace.hedged);
  const hedge::EngineResponse& response =
      first->trace.hedged ? *first : *second;
  EXPECT_EQ(response.body, "fast");
  EXPECT_TRUE(response.trace.hedge_won);
  EXPECT_EQ(response.trace.attempts, 2);
  EXPECT_EQ(response.trace.replica, replicas_[1]->url());
  EXPECT_GE(response.trace.latency, absl::Milliseconds(20));
  EXPECT_TRUE(replicas_[0]->WaitForDisconnectsBeforeResponse(1, absl::Seconds(2)));
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.hedges, 1u);
  EXPECT_EQ(stats.hedge_wins, 1u);
  EXPECT_EQ(stats.in_flight_attempts, 0);
}

TEST_F(EngineHedgingTest, ServerErrorPrimaryFallsBackBeforeTimer) {
  StartReplicas({Always(Answer("err", absl::ZeroDuration(), 503)),
                 Always(Answer("ok"))});
  hedge::EngineConfig config = DefaultConfig();
  config.upstreams[0].hedge_delay = absl::Seconds(2);
  StartEngine(config);
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<hedge::EngineResponse> response = Read("/x");
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "ok");
    EXPECT_LT(response->trace.latency, absl::Seconds(1));
  }
  EXPECT_EQ(engine_->Snapshot().fallbacks, 1u);
}

}  // namespace
}  // namespace tailgate::testing
