// The engine's deadline and cancellation: one total deadline shared by both
// attempts, caller cancellation of everything in flight, and shutdown.

#include "gtest/gtest.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

class EngineDeadlineTest : public EngineFixture {
 protected:
  void ExpectBothReplicasSawTheClientGo() {
    for (const auto& replica : replicas_) {
      EXPECT_TRUE(
          replica->WaitForDisconnectsBeforeResponse(1, absl::Seconds(2)))
          << replica->url();
    }
  }
};

TEST_F(EngineDeadlineTest, TimeoutIsSharedByBothAttempts) {
  StartReplicas({Always(Hang()), Always(Hang())});
  hedge::EngineConfig config = DefaultConfig();
  config.timeout = absl::Seconds(1);
  // Late, yet with time to reach its replica before the deadline.
  config.upstreams[0].hedge_delay = absl::Milliseconds(600);
  // The primary is not given up on (that has tests of its own).
  config.upstreams[0].give_up.factor = 0;
  StartEngine(config);
  // The caller's deadline (5 s) is capped by the engine's timeout.
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDeadlineExceeded)
      << response.status();
  EXPECT_EQ(response.status().message(),
            "the sidecar's timeout (1s) passed before a replica answered");
  // Had the hedge (launched at 600 ms) got a timeout of its own, the read
  // would have lasted 1.6 s.
  EXPECT_GE(last_latency_, absl::Seconds(1));
  EXPECT_LT(last_latency_, absl::Milliseconds(1500));
  ExpectBothReplicasSawTheClientGo();
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.attempts, 2u);
  EXPECT_EQ(stats.timeouts, 1u);
  // The sidecar's own timeout ran out: the primary (1 s old) failed to
  // answer; the hedge (400 ms old, under half the timeout) is spared.
  EXPECT_EQ(stats.backend_failures, 1u);
  EXPECT_EQ(stats.replicas[0].failures, 1u);
  EXPECT_EQ(stats.replicas[1].failures, 0u);
  ExpectIdle();
  ExpectNoTransportDetail(response.status(),
                          {replicas_[0]->port(), replicas_[1]->port()});
}

TEST_F(EngineDeadlineTest, HungReplicaIsAvoidedAfterATimeout) {
  StartReplicas({Always(Hang()), Always(Answer("healthy"))});
  hedge::EngineConfig config = DefaultConfig();
  config.timeout = absl::Milliseconds(500);
  config.upstreams[0].budget = {0, 0};  // no timer hedge
  config.upstreams[0].give_up.factor = 0;  // no give-up fallback
  StartEngine(config);
  // The first read starts on the hung replica (equal costs go in
  // rotation) and times out: it failed, and the half second it ran is its
  // latency now, so the reads after it go to the healthy one.
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDeadlineExceeded)
      << response.status();
  for (int i = 0; i < 6; ++i) {
    response = Read("/x");
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "healthy");
  }
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.replicas[0].failures, 1u);
  EXPECT_EQ(stats.replicas[0].attempts_primary, 1u);
  EXPECT_EQ(stats.replicas[1].attempts_primary, 6u);
  ExpectIdle();
}

TEST_F(EngineDeadlineTest, CallerDeadlineShorterThanTimeoutIsKept) {
  StartReplicas({Always(Hang()), Always(Hang())});
  hedge::EngineConfig config = DefaultConfig();
  config.timeout = absl::Seconds(5);
  StartEngine(config);
  hedge::EngineRead read = Get("/x");
  // Timed from when the deadline is set, on the engine's clock: Read's own
  // last_latency_ starts a little later.
  const absl::Time set_at = engine_->clock().Now();
  read.deadline = set_at + absl::Milliseconds(150);
  absl::StatusOr<hedge::EngineResponse> response = Read(std::move(read));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDeadlineExceeded)
      << response.status();
  EXPECT_EQ(response.status().message(),
            "the caller's deadline passed before a replica answered");
  EXPECT_GE(engine_->clock().Now() - set_at, absl::Milliseconds(150));
  EXPECT_LT(last_latency_, absl::Seconds(1));
  ExpectBothReplicasSawTheClientGo();
  // The caller's own deadline says nothing about the replicas.
  EXPECT_EQ(engine_->Snapshot().backend_failures, 0u);
  ExpectIdle();
}

TEST_F(EngineDeadlineTest, CancelAbortsBothAttempts) {
  StartReplicas({Always(Hang()), Always(Hang())});
  StartEngine();
  PendingRead& pending = NewPendingRead();
  const uint64_t id = Submit(Get("/x"), pending);
  // Both the primary and the hedge are waiting on their replicas.
  ASSERT_TRUE(replicas_[0]->WaitForRequests(1, absl::Seconds(2)));
  ASSERT_TRUE(replicas_[1]->WaitForRequests(1, absl::Seconds(2)));
  engine_->Cancel(id);
  const absl::StatusOr<hedge::EngineResponse>& result =
      pending.Wait(absl::Seconds(1));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled)
      << result.status();
  ExpectBothReplicasSawTheClientGo();
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.cancelled, 1u);
  EXPECT_EQ(stats.backend_failures, 0u);
  ExpectIdle();
}

TEST_F(EngineDeadlineTest, CancelAfterCompletionChangesNothing) {
  StartReplicas({Always(Answer("ok")), Always(Answer("ok"))});
  StartEngine();
  PendingRead& pending = NewPendingRead();
  const uint64_t id = Submit(Get("/x"), pending);
  ASSERT_TRUE(pending.Wait().ok()) << pending.Wait().status();
  engine_->Cancel(id);
  // The engine keeps serving, and the cancel did not count.
  absl::StatusOr<hedge::EngineResponse> next = Read("/y");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(engine_->Snapshot().cancelled, 0u);
  ExpectIdle();
}

TEST_F(EngineDeadlineTest, ShutdownCompletesReadsInFlightAsUnavailable) {
  StartReplicas({Always(Hang()), Always(Hang())});
  StartEngine();
  PendingRead& pending = NewPendingRead();
  Submit(Get("/x"), pending);
  ASSERT_TRUE(replicas_[0]->WaitForRequests(1, absl::Seconds(2)));
  ASSERT_TRUE(replicas_[1]->WaitForRequests(1, absl::Seconds(2)));
  engine_.reset();
  const absl::StatusOr<hedge::EngineResponse>& result =
      pending.Wait(absl::Seconds(1));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable)
      << result.status();
  ExpectBothReplicasSawTheClientGo();
}

}  // namespace
}  // namespace tailgate::testing
