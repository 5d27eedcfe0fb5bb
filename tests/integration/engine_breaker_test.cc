// The engine's per-replica circuit breakers, through real I/O: consecutive
// failures open a circuit, reads then avoid the replica, one probe after the
// cooldown decides, and stale outcomes are ignored.
//
// Cooldowns are crossed with a FakeClock (the engine reads all its time from
// it), so no test waits for one.

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "hedge/circuit_breaker.h"
#include "tests/fake_clock.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

using hedge::CircuitState;

constexpr int kThreshold = 3;
constexpr absl::Duration kCooldown = absl::Seconds(30);
// How long a stale outcome takes to come back: far longer than the few
// fast local reads each stale-outcome test makes meanwhile.
constexpr absl::Duration kSlow = absl::Milliseconds(500);

hedge::EngineConfig BreakerConfig() {
  hedge::EngineConfig config = EngineFixture::DefaultConfig();
  config.upstreams[0].circuit = hedge::CircuitConfig{kThreshold, kCooldown};
  // Failures are seen through fallbacks, never through a timer hedge.
  config.upstreams[0].hedge_delay = absl::Seconds(2);
  config.timeout = absl::Seconds(5);
  return config;
}

class EngineBreakerTest : public EngineFixture {
 protected:
  // Replica 0 ("A") answers 500 until told otherwise; replica 1 ("B") 200.
  // The engine runs on clock_.
  void StartFailingAndHealthy() {
    StartReplicas({Always(Answer("down", absl::ZeroDuration(), 500)),
                   Always(Answer("up"))});
    StartEngineWithUrls(BreakerConfig(), ReplicaUrls(), clock_);
  }

  hedge::CircuitSnapshot CircuitOf(size_t replica) const {
    return engine_->Snapshot().replicas[replica].circuit;
  }

  // Reads until A's circuit opens; every read is still answered by B.
  void OpenCircuitOfA() {
    for (int i = 0; i < 4 * kThreshold; ++i) {
      if (CircuitOf(0).state == CircuitState::kOpen) break;
      EXPECT_EQ(CircuitOf(0).consecutive_failures,
                replicas_[0]->requests_received());
      absl::StatusOr<hedge::EngineResponse> response = Read(Get("/x"));
      ASSERT_TRUE(response.ok()) << response.status();
      EXPECT_EQ(response->body, "up");
    }
    ASSERT_EQ(CircuitOf(0).state, CircuitState::kOpen);
    EXPECT_EQ(replicas_[0]->requests_received(), kThreshold);
  }

  hedge::EngineRead GetWithoutHedge(std::string target) const {
    hedge::EngineRead read = Get(std::move(target));
    read.hedge_disabled = true;
    return read;
  }

  FakeClock clock_;  // outlives the engine, which TearDown destroys
};

TEST_F(EngineBreakerTest, ConsecutiveFailuresOpenTheCircuitAndReadsAvoidIt) {
  StartFailingAndHealthy();
  OpenCircuitOfA();
  EXPECT_EQ(CircuitOf(1).state, CircuitState::kClosed);
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<hedge::EngineResponse> response = Read("/y");
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "up");
    EXPECT_EQ(response->trace.attempts, 1);  // straight to B
  }
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold);
  EXPECT_EQ(engine_->Snapshot().replicas[0].attempts_primary +
                engine_->Snapshot().replicas[0].attempts_fallback,
            static_cast<uint64_t>(kThreshold));
}

TEST_F(EngineBreakerTest, AfterCooldownOneProbeAndItsSuccessCloses) {
  StartFailingAndHealthy();
  OpenCircuitOfA();
  const uint64_t opened = CircuitOf(0).generation;
  replicas_[0]->SetHandler(Always(Answer("probe", absl::Milliseconds(300))));

  // Before the cooldown, A gets nothing.
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(Read("/early").ok());
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold);

  clock_.Advance(kCooldown);
  std::vector<PendingRead*> reads;
  for (int i = 0; i < 4; ++i) {
    reads.push_back(&NewPendingRead());
    Submit(GetWithoutHedge("/after"), *reads.back());
  }
  ASSERT_TRUE(replicas_[0]->WaitForRequests(kThreshold + 1, absl::Seconds(2)));
  EXPECT_EQ(CircuitOf(0).state, CircuitState::kHalfOpen);
  int from_a = 0;
  for (PendingRead* read : reads) {
    const absl::StatusOr<hedge::EngineResponse>& result = read->Wait();
    ASSERT_TRUE(result.ok()) << result.status();
    from_a += result->trace.replica == replicas_[0]->url();
  }
  // Exactly one probe while it was out; the other reads went to B.
  EXPECT_EQ(from_a, 1);
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold + 1);
  const hedge::CircuitSnapshot closed = CircuitOf(0);
  EXPECT_EQ(closed.state, CircuitState::kClosed);
  EXPECT_EQ(closed.generation, opened + 2);  // half-open, then closed

  // Closed again: A takes its share of primaries.
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(Read(GetWithoutHedge("/z")).ok());
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold + 2);
}

TEST_F(EngineBreakerTest, FailedProbeReopensForAnotherCooldown) {
  StartFailingAndHealthy();
  OpenCircuitOfA();
  const uint64_t opened = CircuitOf(0).generation;
  clock_.Advance(kCooldown);
  // Of two reads one starts on A: the probe fails, the read falls back.
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<hedge::EngineResponse> response = Read("/probe");
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "up");
  }
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold + 1);
  const hedge::CircuitSnapshot reopened = CircuitOf(0);
  EXPECT_EQ(reopened.state, CircuitState::kOpen);
  EXPECT_EQ(reopened.generation, opened + 2);  // half-open, then open
  // The new cooldown runs from the failed probe.
  clock_.Advance(kCooldown / 2);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Read("/later").ok());
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold + 1);
}

TEST_F(EngineBreakerTest, CancelledProbeReleasesItWithoutVerdict) {
  StartFailingAndHealthy();
  OpenCircuitOfA();
  const int64_t b_before = replicas_[1]->requests_received();
  replicas_[0]->SetHandler(Always(Hang()));
  replicas_[1]->SetHandler(Always(Hang()));
  clock_.Advance(kCooldown);
  // One read probes A, the other goes to B; both hang until cancelled.
  PendingRead& first = NewPendingRead();
  PendingRead& second = NewPendingRead();
  const uint64_t first_id = Submit(GetWithoutHedge("/p"), first);
  const uint64_t second_id = Submit(GetWithoutHedge("/p"), second);
  ASSERT_TRUE(replicas_[0]->WaitForRequests(kThreshold + 1, absl::Seconds(2)));
  ASSERT_TRUE(replicas_[1]->WaitForRequests(b_before + 1, absl::Seconds(2)));
  ASSERT_EQ(CircuitOf(0).state, CircuitState::kHalfOpen);
  const uint64_t probing = CircuitOf(0).generation;
  engine_->Cancel(first_id);
  engine_->Cancel(second_id);
  for (PendingRead* read : {&first, &second}) {
    EXPECT_EQ(read->Wait().status().code(), absl::StatusCode::kCancelled)
        << read->Wait().status();
  }
  ASSERT_TRUE(
      replicas_[0]->WaitForDisconnectsBeforeResponse(1, absl::Seconds(2)));
  // No verdict: still half-open, same generation, and the probe is free.
  EXPECT_EQ(CircuitOf(0).state, CircuitState::kHalfOpen);
  EXPECT_EQ(CircuitOf(0).generation, probing);
  replicas_[0]->SetHandler(Always(Answer("back")));
  replicas_[1]->SetHandler(Always(Answer("up")));
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(Read(GetWithoutHedge("/q")).ok());
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold + 2);
  EXPECT_EQ(CircuitOf(0).state, CircuitState::kClosed);
}

// A success that started before the circuit opened and arrives after it
// carries the old generation: it must not close the circuit.
TEST_F(EngineBreakerTest, StaleSuccessDoesNotCloseACircuitOpenedLater) {
  StartReplicas(
      {Route({{"/slow", Always(Answer("late", kSlow))},
              {"/fail", Always(Answer("down", absl::ZeroDuration(), 500))}})});
  hedge::EngineConfig config = BreakerConfig();
  config.upstreams[0].circuit = hedge::CircuitConfig{2, absl::Seconds(60)};
  StartEngine(config);

  PendingRead& slow = NewPendingRead();
  Submit(Get("/slow"), slow);
  ASSERT_TRUE(replicas_[0]->WaitForRequests(1, absl::Seconds(2)));
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<hedge::EngineResponse> response = Read("/fail");
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->status, 500);  // forwarded: no other replica
  }
  ASSERT_FALSE(slow.done()) << "the slow success came back too early";
  const hedge::CircuitSnapshot opened = CircuitOf(0);
  ASSERT_EQ(opened.state, CircuitState::kOpen);

  const absl::StatusOr<hedge::EngineResponse>& late = slow.Wait();
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(late->body, "late");  // the caller still gets its answer
  const hedge::CircuitSnapshot after = CircuitOf(0);
  EXPECT_EQ(after.state, CircuitState::kOpen);
  EXPECT_EQ(after.generation, opened.generation);
  absl::StatusOr<hedge::EngineResponse> refused = Read("/fail");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable)
      << refused.status();
  EXPECT_EQ(replicas_[0]->requests_received(), 3);
}

// A failure that started before the circuit opened and arrives after it has
// been probed and closed again carries an old generation: it must not count
// against the new closed period.
TEST_F(EngineBreakerTest, StaleFailureDoesNotCountAgainstACircuitClosedLater) {
  StartReplicas({Route({
      {"/slowfail", Always(Answer("late", kSlow, 500))},
      {"/fail", Always(Answer("down", absl::ZeroDuration(), 500))},
      {"/ok", Always(Answer("up"))},
  })});
  hedge::EngineConfig config = BreakerConfig();
  config.upstreams[0].circuit = hedge::CircuitConfig{2, kCooldown};
  config.timeout = absl::Hours(1);  // no deadline fires when the clock jumps
  StartEngineWithUrls(config, ReplicaUrls(), clock_);
  auto read = [this](const char* target) {
    hedge::EngineRead read = Get(target);
    read.deadline = absl::InfiniteFuture();
    return read;
  };

  PendingRead& slow = NewPendingRead();
  Submit(read("/slowfail"), slow);
  ASSERT_TRUE(replicas_[0]->WaitForRequests(1, absl::Seconds(2)));
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(Read(read("/fail")).ok());
  ASSERT_EQ(CircuitOf(0).state, CircuitState::kOpen);
  clock_.Advance(kCooldown);
  absl::StatusOr<hedge::EngineResponse> probe = Read(read("/ok"));
  ASSERT_TRUE(probe.ok()) << probe.status();
  ASSERT_EQ(CircuitOf(0).state, CircuitState::kClosed);
  ASSERT_TRUE(Read(read("/fail")).ok());
  const hedge::CircuitSnapshot closed = CircuitOf(0);
  ASSERT_EQ(closed.consecutive_failures, 1);
  ASSERT_FALSE(slow.done()) << "the slow failure came back too early";

  const absl::StatusOr<hedge::EngineResponse>& late = slow.Wait();
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(late->status, 500);  // forwarded to its caller all the same
  const hedge::CircuitSnapshot after = CircuitOf(0);
  EXPECT_EQ(after.state, CircuitState::kClosed);
  EXPECT_EQ(after.generation, closed.generation);
  EXPECT_EQ(after.consecutive_failures, 1);
  // A current failure still counts: the second one opens the circuit.
  ASSERT_TRUE(Read(read("/fail")).ok());
  EXPECT_EQ(CircuitOf(0).state, CircuitState::kOpen);
}

}  // namespace
}  // namespace tailgate::testing
