// Replica health through real I/O: failures in a row eject a replica,
// reads then avoid it, probes sent beside live reads (never as a read's
// only attempt) bring it back, a failed probe ejects it again for longer,
// and it ramps back into the primaries' share.
//
// Ejection times are crossed with a FakeClock (the engine reads all its
// time from it), so no test waits for one. Stale tickets (an outcome from
// before a transition) are covered by
// hedge/health/circuit_breaker_test.cc: with two replicas, reads avoid one
// that has an attempt in flight, so they cannot be staged here reliably.

#include <cstdint>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "hedge/health/circuit_breaker.h"
#include "tests/fake_clock.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

using hedge::CircuitState;

constexpr int kThreshold = 3;
constexpr absl::Duration kCooldown = absl::Seconds(30);

hedge::EngineConfig BreakerConfig() {
  hedge::EngineConfig config = EngineFixture::DefaultConfig();
  hedge::CircuitConfig& circuit = config.upstreams[0].circuit;
  circuit.failure_threshold = kThreshold;
  circuit.cooldown = kCooldown;
  circuit.max_ejection_time = 4 * kCooldown;
  circuit.ramp_up = kCooldown;
  // Failures are seen through fallbacks, never through a timer hedge or a
  // give-up (their timers would need the fake clock to move).
  config.upstreams[0].hedge_delay = absl::Seconds(2);
  config.upstreams[0].give_up.factor = 0;
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

  hedge::ReplicaSnapshot ReplicaA() const {
    return engine_->Snapshot().replicas[0];
  }
  hedge::CircuitSnapshot CircuitOfA() const { return ReplicaA().circuit; }

  // Reads until A is ejected; every read is still answered by B. A second
  // passes before each read, so that a failure's cost has decayed and the
  // rotation comes back to A.
  void EjectA() {
    for (int i = 0; i < 4 * kThreshold; ++i) {
      if (CircuitOfA().state == CircuitState::kOpen) break;
      clock_.Advance(absl::Seconds(1));
      absl::StatusOr<hedge::EngineResponse> response = Read(Get("/x"));
      ASSERT_TRUE(response.ok()) << response.status();
      EXPECT_EQ(response->body, "up");
    }
    ASSERT_EQ(CircuitOfA().state, CircuitState::kOpen);
    EXPECT_EQ(replicas_[0]->requests_received(), kThreshold);
    EXPECT_EQ(
        CircuitOfA()
            .ejections[static_cast<int>(hedge::EjectReason::kConsecutive)],
        1u);
  }

  // Waits (bounded) until A's probes have ended `passed` + `failed` times.
  void AwaitProbes(uint64_t passed, uint64_t failed) {
    const absl::Time give_up = absl::Now() + absl::Seconds(5);
    while (absl::Now() < give_up) {
      const hedge::ReplicaSnapshot a = ReplicaA();
      if (a.probes_passed >= passed && a.probes_failed >= failed) return;
      absl::SleepFor(absl::Milliseconds(1));  // polling a condition
    }
    ADD_FAILURE() << "probes of A did not end";
  }

  hedge::EngineRead GetWithoutHedge(std::string target) const {
    hedge::EngineRead read = Get(std::move(target));
    read.hedge_disabled = true;
    return read;
  }

  FakeClock clock_;  // outlives the engine, which TearDown destroys
};

TEST_F(EngineBreakerTest, ConsecutiveFailuresEjectAndReadsAvoidIt) {
  StartFailingAndHealthy();
  EjectA();
  EXPECT_EQ(engine_->Snapshot().replicas[1].circuit.state,
            CircuitState::kClosed);
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<hedge::EngineResponse> response = Read("/y");
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "up");
    EXPECT_EQ(response->trace.attempts, 1);  // straight to B
  }
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold);
}

TEST_F(EngineBreakerTest, ProbesBesideLiveReadsBringItBackAndItRampsUp) {
  StartFailingAndHealthy();
  EjectA();
  const uint64_t ejected = CircuitOfA().generation;
  replicas_[0]->SetHandler(Always(Answer("back")));

  // Before the ejection is over, A gets nothing.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Read("/early").ok());
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold);

  clock_.Advance(kCooldown);
  // Each read is answered by B; a copy of it probes A on the side.
  for (uint64_t probe = 1; probe <= 2; ++probe) {
    absl::StatusOr<hedge::EngineResponse> response =
        Read(GetWithoutHedge("/after"));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "up");
    EXPECT_EQ(response->trace.attempts, 1);
    AwaitProbes(probe, 0);
    if (probe == 1) {
      EXPECT_EQ(CircuitOfA().state, CircuitState::kHalfOpen);
    }
  }
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold + 2);
  const hedge::CircuitSnapshot back = CircuitOfA();
  EXPECT_EQ(back.state, CircuitState::kClosed);
  EXPECT_EQ(back.generation, ejected + 2);  // probing, then serving
  EXPECT_DOUBLE_EQ(back.weight, hedge::CircuitBreaker::kMinWeight);

  // Ramped up: A takes its half of the primaries again.
  clock_.Advance(kCooldown);
  EXPECT_DOUBLE_EQ(CircuitOfA().weight, 1.0);
  const uint64_t primaries = ReplicaA().attempts_primary;
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<hedge::EngineResponse> response =
        Read(GetWithoutHedge("/z"));
    ASSERT_TRUE(response.ok()) << response.status();
  }
  EXPECT_GE(ReplicaA().attempts_primary, primaries + 4);
}

TEST_F(EngineBreakerTest, FailedProbeEjectsAgainForLonger) {
  StartFailingAndHealthy();
  EjectA();
  const uint64_t ejected = CircuitOfA().generation;
  clock_.Advance(kCooldown);
  absl::StatusOr<hedge::EngineResponse> response = Read("/probe");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "up");
  AwaitProbes(0, 1);
  hedge::CircuitSnapshot again = CircuitOfA();
  EXPECT_EQ(again.state, CircuitState::kOpen);
  EXPECT_EQ(again.generation, ejected + 2);  // probing, then ejected
  EXPECT_EQ(again.ejections[static_cast<int>(hedge::EjectReason::kProbe)], 1u);
  EXPECT_EQ(again.ejected_for, 2 * kCooldown);
  // The second ejection is twice as long: after one cooldown, no probe.
  clock_.Advance(kCooldown);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Read("/later").ok());
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold + 1);
  clock_.Advance(kCooldown);
  ASSERT_TRUE(Read("/later").ok());
  AwaitProbes(0, 2);
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold + 2);
}

TEST_F(EngineBreakerTest, NoReadIsEverAProbesOnlyAttempt) {
  StartFailingAndHealthy();
  EjectA();
  replicas_[0]->SetHandler(Always(Hang()));
  clock_.Advance(kCooldown);
  std::vector<PendingRead*> reads;
  for (int i = 0; i < 4; ++i) {
    reads.push_back(&NewPendingRead());
    Submit(GetWithoutHedge("/p"), *reads.back());
  }
  for (PendingRead* read : reads) {
    const absl::StatusOr<hedge::EngineResponse>& result = read->Wait();
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->trace.replica, replicas_[1]->url());
  }
  // One probe (a copy of the first read) is out on A, hanging; the reads
  // did not wait for it.
  ASSERT_TRUE(replicas_[0]->WaitForRequests(kThreshold + 1, absl::Seconds(2)));
  EXPECT_EQ(replicas_[0]->requests_received(), kThreshold + 1);
  EXPECT_EQ(CircuitOfA().state, CircuitState::kHalfOpen);
}

TEST_F(EngineBreakerTest, TheLastServingReplicaIsNeverEjected) {
  StartReplicas({Always(Answer("down", absl::ZeroDuration(), 500)),
                 Always(Answer("down", absl::ZeroDuration(), 500))});
  StartEngineWithUrls(BreakerConfig(), ReplicaUrls(), clock_);
  for (int i = 0; i < 6 * kThreshold; ++i) {
    absl::StatusOr<hedge::EngineResponse> response = Read("/x");
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->status, 500);  // forwarded: both failed
  }
  // Both fail alike: neither is clearly worse, so neither is ejected.
  const hedge::EngineSnapshot snapshot = engine_->Snapshot();
  EXPECT_EQ(snapshot.replicas[0].circuit.state, CircuitState::kClosed);
  EXPECT_EQ(snapshot.replicas[1].circuit.state, CircuitState::kClosed);
}

}  // namespace
}  // namespace tailgate::testing
