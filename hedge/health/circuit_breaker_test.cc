#include "hedge/health/circuit_breaker.h"

#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

absl::Time At(int ms) { return absl::UnixEpoch() + absl::Milliseconds(ms); }

// Three failures in a row, or half of at least ten outcomes in ten
// seconds; ejected for 1 s, 2 s, 4 s... up to 10 s; two probes to return;
// a five-second ramp-up.
CircuitConfig TestConfig() {
  CircuitConfig config;
  config.failure_threshold = 3;
  config.cooldown = absl::Seconds(1);
  config.failure_rate = 0.5;
  config.min_requests = 10;
  config.window = absl::Seconds(10);
  config.max_ejection_time = absl::Seconds(10);
  config.probe_successes = 2;
  config.ramp_up = absl::Seconds(5);
  return config;
}

// TestConfig(), but only the failure rate wants an ejection.
CircuitConfig RateOnlyConfig() {
  CircuitConfig config = TestConfig();
  config.failure_threshold = 1000;
  return config;
}

void Fail(CircuitBreaker& breaker, int n, absl::Time now) {
  for (int i = 0; i < n; ++i) {
    std::optional<CircuitTicket> ticket = breaker.TryAcquire(now);
    ASSERT_TRUE(ticket.has_value());
    breaker.OnFailure(*ticket, now);
  }
}

void Succeed(CircuitBreaker& breaker, int n, absl::Time now) {
  for (int i = 0; i < n; ++i) {
    std::optional<CircuitTicket> ticket = breaker.TryAcquire(now);
    ASSERT_TRUE(ticket.has_value());
    breaker.OnSuccess(*ticket, now);
  }
}

// Probes until the breaker serves again. REQUIRES: its ejection is over.
void Return(CircuitBreaker& breaker, absl::Time now) {
  for (int i = 0; i < breaker.config().probe_successes; ++i) {
    std::optional<CircuitTicket> probe = breaker.TryAcquireProbe(now);
    ASSERT_TRUE(probe.has_value());
    breaker.OnSuccess(*probe, now);
  }
  ASSERT_EQ(breaker.Snapshot(now).state, CircuitState::kClosed);
}

// A probe that fails at `now`. REQUIRES: its ejection is over.
void FailProbe(CircuitBreaker& breaker, absl::Time now) {
  std::optional<CircuitTicket> probe = breaker.TryAcquireProbe(now);
  ASSERT_TRUE(probe.has_value());
  breaker.OnFailure(*probe, now);
}

// How long the ejection in force lasts from `now`.
absl::Duration EjectedFor(const CircuitBreaker& breaker, absl::Time now) {
  return breaker.ejected_until() - now;
}

TEST(CircuitBreakerTest, Names) {
  EXPECT_STREQ(CircuitStateName(CircuitState::kClosed), "closed");
  EXPECT_STREQ(CircuitStateName(CircuitState::kOpen), "open");
  EXPECT_STREQ(CircuitStateName(CircuitState::kHalfOpen), "half_open");
  EXPECT_STREQ(ReplicaStateName(CircuitState::kClosed), "serving");
  EXPECT_STREQ(ReplicaStateName(CircuitState::kOpen), "ejected");
  EXPECT_STREQ(ReplicaStateName(CircuitState::kHalfOpen), "probing");
  EXPECT_STREQ(EjectReasonName(EjectReason::kConsecutive), "consecutive");
  EXPECT_STREQ(EjectReasonName(EjectReason::kFailureRate), "failure_rate");
  EXPECT_STREQ(EjectReasonName(EjectReason::kProbe), "probe");
}

TEST(CircuitBreakerTest, ServingGrantsPlainTickets) {
  CircuitBreaker breaker(TestConfig());
  EXPECT_TRUE(breaker.IsEligible(At(0)));
  EXPECT_EQ(breaker.Weight(At(0)), 1);
  EXPECT_FALSE(breaker.WantsProbe(At(0)));
  EXPECT_FALSE(breaker.TryAcquireProbe(At(0)).has_value());
  EXPECT_EQ(breaker.ejected_until(), absl::InfiniteFuture());
  for (int i = 0; i < 3; ++i) {
    std::optional<CircuitTicket> ticket = breaker.TryAcquire(At(0));
    ASSERT_TRUE(ticket.has_value());
    EXPECT_FALSE(ticket->probe);
    EXPECT_EQ(ticket->generation, 0u);
  }
}

TEST(CircuitBreakerTest, ConsecutiveFailuresWantEjection) {
  CircuitBreaker breaker(TestConfig());
  Fail(breaker, 2, At(0));
  EXPECT_EQ(breaker.WantsEjection(At(0)), std::nullopt);
  EXPECT_EQ(breaker.Snapshot(At(0)).consecutive_failures, 2);
  Fail(breaker, 1, At(0));
  EXPECT_EQ(breaker.WantsEjection(At(0)), EjectReason::kConsecutive);
  // Wanting is not being ejected: the set's guard rails decide.
  EXPECT_EQ(breaker.Snapshot(At(0)).state, CircuitState::kClosed);
  EXPECT_TRUE(breaker.TryAcquire(At(0)).has_value());
}

TEST(CircuitBreakerTest, SuccessEndsTheFailureRun) {
  CircuitBreaker breaker(TestConfig());
  Fail(breaker, 2, At(0));
  Succeed(breaker, 1, At(0));
  EXPECT_EQ(breaker.Snapshot(At(0)).consecutive_failures, 0);
  Fail(breaker, 2, At(0));
  EXPECT_EQ(breaker.WantsEjection(At(0)), std::nullopt);
  Fail(breaker, 1, At(0));
  EXPECT_EQ(breaker.WantsEjection(At(0)), EjectReason::kConsecutive);
}

TEST(CircuitBreakerTest, FailureRateWantsEjectionOnlyWithMinRequests) {
  CircuitBreaker breaker(RateOnlyConfig());
  Fail(breaker, 9, At(0));  // every outcome failed, but only nine
  EXPECT_EQ(breaker.WantsEjection(At(0)), std::nullopt);
  EXPECT_DOUBLE_EQ(breaker.FailureRate(At(0)), 1.0);
  Fail(breaker, 1, At(0));
  EXPECT_EQ(breaker.WantsEjection(At(0)), EjectReason::kFailureRate);

  CircuitBreaker below(RateOnlyConfig());
  Succeed(below, 6, At(0));
  Fail(below, 4, At(0));  // 4 of 10: below half
  EXPECT_EQ(below.WantsEjection(At(0)), std::nullopt);
  Fail(below, 1, At(0));  // 5 of 11: still below
  EXPECT_EQ(below.WantsEjection(At(0)), std::nullopt);
  Fail(below, 1, At(0));  // 6 of 12: half
  EXPECT_EQ(below.WantsEjection(At(0)), EjectReason::kFailureRate);
  const CircuitSnapshot snapshot = below.Snapshot(At(0));
  EXPECT_EQ(snapshot.window_outcomes, 12);
  EXPECT_EQ(snapshot.window_failures, 6);
}

TEST(CircuitBreakerTest, GrayReplicaWantsEjectionByFailureRate) {
  // Every other attempt fails: never two failures in a row.
  CircuitBreaker breaker(TestConfig());
  for (int i = 0; i < 20; ++i) {
    const absl::Time now = At(i * 10);
    if (i % 2 == 0) {
      Fail(breaker, 1, now);
    } else {
      Succeed(breaker, 1, now);
    }
    EXPECT_LE(breaker.Snapshot(now).consecutive_failures, 1);
    EXPECT_EQ(
        breaker.WantsEjection(now),
        i + 1 >= 10 ? std::optional(EjectReason::kFailureRate) : std::nullopt)
        << i;
  }
}

TEST(CircuitBreakerTest, FailuresOutsideTheWindowNoLongerCount) {
  CircuitBreaker breaker(RateOnlyConfig());
  Fail(breaker, 10, At(0));
  EXPECT_EQ(breaker.WantsEjection(At(9999)), EjectReason::kFailureRate);
  EXPECT_EQ(breaker.WantsEjection(At(10000)), std::nullopt);
  EXPECT_EQ(breaker.FailureRate(At(10000)), 0);
}

TEST(CircuitBreakerTest, CancellationIsNeutral) {
  CircuitBreaker breaker(TestConfig());
  Fail(breaker, 2, At(0));
  for (int i = 0; i < 5; ++i) breaker.OnCancel(*breaker.TryAcquire(At(0)));
  const CircuitSnapshot snapshot = breaker.Snapshot(At(0));
  EXPECT_EQ(snapshot.state, CircuitState::kClosed);
  EXPECT_EQ(snapshot.generation, 0u);
  EXPECT_EQ(snapshot.consecutive_failures, 2);  // neither reset nor raised
  EXPECT_EQ(snapshot.window_outcomes, 2);
  Fail(breaker, 1, At(0));
  EXPECT_EQ(breaker.WantsEjection(At(0)), EjectReason::kConsecutive);
}

TEST(CircuitBreakerTest, NoUserTicketWhileEjectedOrProbing) {
  CircuitBreaker breaker(TestConfig());
  breaker.Eject(At(0), EjectReason::kConsecutive);
  EXPECT_EQ(breaker.Snapshot(At(0)).state, CircuitState::kOpen);
  for (int ms : {0, 999, 1000, 60000}) {
    EXPECT_FALSE(breaker.IsEligible(At(ms))) << ms;
    EXPECT_FALSE(breaker.TryAcquire(At(ms)).has_value()) << ms;
    EXPECT_EQ(breaker.Weight(At(ms)), 0) << ms;
  }
  ASSERT_TRUE(breaker.TryAcquireProbe(At(1000)).has_value());
  EXPECT_EQ(breaker.Snapshot(At(1000)).state, CircuitState::kHalfOpen);
  EXPECT_FALSE(breaker.IsEligible(At(1000)));
  EXPECT_FALSE(breaker.TryAcquire(At(1000)).has_value());
  EXPECT_EQ(breaker.Weight(At(1000)), 0);
}

TEST(CircuitBreakerTest, EjectIsANoOpUnlessServing) {
  CircuitBreaker breaker(TestConfig());
  breaker.Eject(At(0), EjectReason::kConsecutive);
  breaker.Eject(At(500), EjectReason::kFailureRate);
  EXPECT_EQ(breaker.ejected_until(), At(1000));
  ASSERT_TRUE(breaker.TryAcquireProbe(At(1000)).has_value());
  breaker.Eject(At(1000), EjectReason::kFailureRate);
  const CircuitSnapshot snapshot = breaker.Snapshot(At(1000));
  EXPECT_EQ(snapshot.state, CircuitState::kHalfOpen);
  EXPECT_EQ(snapshot.generation, 2u);
  EXPECT_EQ(snapshot.ejections[static_cast<int>(EjectReason::kConsecutive)],
            1u);
  EXPECT_EQ(snapshot.ejections[static_cast<int>(EjectReason::kFailureRate)],
            0u);
}

TEST(CircuitBreakerTest, ProbeOnlyAfterTheEjectionTime) {
  CircuitBreaker breaker(TestConfig());
  breaker.Eject(At(0), EjectReason::kConsecutive);
  EXPECT_EQ(breaker.ejected_until(), At(1000));
  EXPECT_FALSE(breaker.WantsProbe(At(999)));
  EXPECT_FALSE(breaker.TryAcquireProbe(At(999)).has_value());
  EXPECT_EQ(breaker.Snapshot(At(999)).probes, 0u);

  EXPECT_TRUE(breaker.WantsProbe(At(1000)));
  std::optional<CircuitTicket> probe = breaker.TryAcquireProbe(At(1000));
  ASSERT_TRUE(probe.has_value());
  EXPECT_TRUE(probe->probe);
  EXPECT_EQ(probe->generation, 2u);
  EXPECT_EQ(breaker.ejected_until(), absl::InfiniteFuture());
  // One probe at a time.
  EXPECT_FALSE(breaker.WantsProbe(At(5000)));
  EXPECT_FALSE(breaker.TryAcquireProbe(At(5000)).has_value());
  EXPECT_EQ(breaker.Snapshot(At(5000)).probes, 1u);
}

TEST(CircuitBreakerTest, ProbeSuccessesReturnToServing) {
  CircuitBreaker breaker(TestConfig());
  breaker.Eject(At(0), EjectReason::kConsecutive);
  const CircuitTicket first = *breaker.TryAcquireProbe(At(1000));
  breaker.OnSuccess(first, At(1010));
  // One of two: still probing, and ready for the next probe.
  EXPECT_EQ(breaker.Snapshot(At(1010)).state, CircuitState::kHalfOpen);
  EXPECT_FALSE(breaker.TryAcquire(At(1010)).has_value());
  EXPECT_TRUE(breaker.WantsProbe(At(1010)));
  const CircuitTicket second = *breaker.TryAcquireProbe(At(1010));
  EXPECT_EQ(second.generation, first.generation);
  breaker.OnSuccess(second, At(1020));

  const CircuitSnapshot snapshot = breaker.Snapshot(At(1020));
  EXPECT_EQ(snapshot.state, CircuitState::kClosed);
  EXPECT_EQ(snapshot.generation, 3u);
  EXPECT_EQ(snapshot.probes, 2u);
  EXPECT_EQ(snapshot.probe_failures, 0u);
  EXPECT_EQ(snapshot.consecutive_failures, 0);
  std::optional<CircuitTicket> ticket = breaker.TryAcquire(At(1020));
  ASSERT_TRUE(ticket.has_value());
  EXPECT_FALSE(ticket->probe);
  EXPECT_EQ(ticket->generation, 3u);
}

TEST(CircuitBreakerTest, FailedProbeEjectsAgainForLonger) {
  CircuitBreaker breaker(TestConfig());
  breaker.Eject(At(0), EjectReason::kConsecutive);
  // One probe passes, the next fails: the passes do not carry over.
  breaker.OnSuccess(*breaker.TryAcquireProbe(At(1000)), At(1000));
  FailProbe(breaker, At(1500));
  CircuitSnapshot snapshot = breaker.Snapshot(At(1500));
  EXPECT_EQ(snapshot.state, CircuitState::kOpen);
  EXPECT_EQ(snapshot.generation, 3u);
  EXPECT_EQ(snapshot.ejections[static_cast<int>(EjectReason::kProbe)], 1u);
  EXPECT_EQ(snapshot.probe_failures, 1u);
  EXPECT_EQ(snapshot.ejected_for, absl::Seconds(2));
  // Counted from the probe's failure.
  EXPECT_EQ(breaker.ejected_until(), At(3500));
  EXPECT_FALSE(breaker.TryAcquireProbe(At(3499)).has_value());
  breaker.OnSuccess(*breaker.TryAcquireProbe(At(3500)), At(3500));
  EXPECT_EQ(breaker.Snapshot(At(3500)).state, CircuitState::kHalfOpen);
  breaker.OnSuccess(*breaker.TryAcquireProbe(At(3500)), At(3500));
  EXPECT_EQ(breaker.Snapshot(At(3500)).state, CircuitState::kClosed);
}

TEST(CircuitBreakerTest, EjectionTimeDoublesUpToTheMaximum) {
  CircuitBreaker breaker(TestConfig());
  absl::Time now = At(0);
  breaker.Eject(now, EjectReason::kConsecutive);
  std::vector<absl::Duration> times;
  for (int i = 0; i < 6; ++i) {
    times.push_back(EjectedFor(breaker, now));
    EXPECT_EQ(breaker.Snapshot(now).ejected_for, times.back());
    now = breaker.ejected_until();
    FailProbe(breaker, now);
  }
  EXPECT_EQ(times,
            (std::vector<absl::Duration>{
                absl::Seconds(1), absl::Seconds(2), absl::Seconds(4),
                absl::Seconds(8), absl::Seconds(10), absl::Seconds(10)}));
}

TEST(CircuitBreakerTest, EjectionTimeGrowsForAReplicaBackOnlyBriefly) {
  CircuitBreaker breaker(TestConfig());
  breaker.Eject(At(0), EjectReason::kConsecutive);
  Return(breaker, At(1000));
  // Ejected again before it has served max_ejection_time (10 s).
  breaker.Eject(At(10999), EjectReason::kFailureRate);
  EXPECT_EQ(EjectedFor(breaker, At(10999)), absl::Seconds(2));
  Return(breaker, At(12999));
  breaker.Eject(At(13000), EjectReason::kConsecutive);
  EXPECT_EQ(EjectedFor(breaker, At(13000)), absl::Seconds(4));
}

TEST(CircuitBreakerTest, EjectionTimeStartsAgainAfterServingTheMaximum) {
  CircuitBreaker breaker(TestConfig());
  absl::Time now = At(0);
  breaker.Eject(now, EjectReason::kConsecutive);
  for (int i = 0; i < 4; ++i) {  // up to 10 s
    now = breaker.ejected_until();
    FailProbe(breaker, now);
  }
  ASSERT_EQ(EjectedFor(breaker, now), absl::Seconds(10));
  now = breaker.ejected_until();
  Return(breaker, now);
  // Served max_ejection_time since it came back: a first ejection again.
  now += absl::Seconds(10);
  breaker.Eject(now, EjectReason::kConsecutive);
  EXPECT_EQ(EjectedFor(breaker, now), absl::Seconds(1));
  now = breaker.ejected_until();
  FailProbe(breaker, now);
  EXPECT_EQ(EjectedFor(breaker, now), absl::Seconds(2));
}

TEST(CircuitBreakerTest, CancelledProbeReleasesIt) {
  CircuitBreaker breaker(TestConfig());
  breaker.Eject(At(0), EjectReason::kConsecutive);
  const CircuitTicket probe = *breaker.TryAcquireProbe(At(1000));
  breaker.OnCancel(probe);
  CircuitSnapshot snapshot = breaker.Snapshot(At(1000));
  EXPECT_EQ(snapshot.state, CircuitState::kHalfOpen);
  EXPECT_EQ(snapshot.generation, 2u);  // no verdict, no transition
  EXPECT_EQ(snapshot.probe_failures, 0u);
  EXPECT_TRUE(breaker.WantsProbe(At(1000)));
  std::optional<CircuitTicket> again = breaker.TryAcquireProbe(At(1000));
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(breaker.TryAcquireProbe(At(1000)).has_value());
  breaker.OnSuccess(*again, At(1001));
  breaker.OnSuccess(*breaker.TryAcquireProbe(At(1001)), At(1001));
  EXPECT_EQ(breaker.Snapshot(At(1001)).state, CircuitState::kClosed);
}

TEST(CircuitBreakerTest, WeightRampsUpAfterReturning) {
  CircuitBreaker breaker(TestConfig());
  EXPECT_EQ(breaker.Weight(At(0)), 1);  // never ejected: full weight
  breaker.Eject(At(0), EjectReason::kConsecutive);
  Return(breaker, At(1000));
  constexpr double kMin = CircuitBreaker::kMinWeight;
  EXPECT_DOUBLE_EQ(breaker.Weight(At(1000)), kMin);
  EXPECT_DOUBLE_EQ(breaker.Weight(At(2000)), kMin + (1 - kMin) * 0.2);
  EXPECT_DOUBLE_EQ(breaker.Weight(At(3500)), kMin + (1 - kMin) * 0.5);
  EXPECT_DOUBLE_EQ(breaker.Snapshot(At(3500)).weight, kMin + (1 - kMin) * 0.5);
  EXPECT_EQ(breaker.Weight(At(6000)), 1);
  EXPECT_EQ(breaker.Weight(At(60000)), 1);

  CircuitConfig no_ramp = TestConfig();
  no_ramp.ramp_up = absl::ZeroDuration();
  CircuitBreaker at_once(no_ramp);
  at_once.Eject(At(0), EjectReason::kConsecutive);
  Return(at_once, At(1000));
  EXPECT_EQ(at_once.Weight(At(1000)), 1);
}

TEST(CircuitBreakerTest, StaleSuccessCannotCountAfterAnEjection) {
  CircuitBreaker breaker(TestConfig());
  const CircuitTicket slow = *breaker.TryAcquire(At(0));
  breaker.Eject(At(10), EjectReason::kConsecutive);
  breaker.OnSuccess(slow, At(20));
  EXPECT_EQ(breaker.Snapshot(At(20)).state, CircuitState::kOpen);
  EXPECT_EQ(breaker.Snapshot(At(20)).generation, 1u);

  // Nor can it pass for a probe, or free the probe out.
  ASSERT_TRUE(breaker.TryAcquireProbe(At(1010)).has_value());
  breaker.OnSuccess(slow, At(1020));
  breaker.OnSuccess(slow, At(1020));
  EXPECT_EQ(breaker.Snapshot(At(1020)).state, CircuitState::kHalfOpen);
  EXPECT_FALSE(breaker.TryAcquireProbe(At(1020)).has_value());
}

TEST(CircuitBreakerTest, StaleFailureAfterReturningDoesNotCount) {
  CircuitBreaker breaker(TestConfig());
  const CircuitTicket old = *breaker.TryAcquire(At(0));
  breaker.Eject(At(0), EjectReason::kConsecutive);
  Return(breaker, At(1000));
  breaker.OnFailure(old, At(1001));
  const CircuitSnapshot snapshot = breaker.Snapshot(At(1001));
  EXPECT_EQ(snapshot.state, CircuitState::kClosed);
  EXPECT_EQ(snapshot.consecutive_failures, 0);
  EXPECT_EQ(snapshot.window_outcomes, 0);
  EXPECT_EQ(snapshot.generation, 3u);
}

TEST(CircuitBreakerTest, StaleSuccessDoesNotEndARunAfterReturning) {
  CircuitBreaker breaker(TestConfig());
  const CircuitTicket old = *breaker.TryAcquire(At(0));
  breaker.Eject(At(0), EjectReason::kConsecutive);
  Return(breaker, At(1000));
  Fail(breaker, 2, At(1001));
  breaker.OnSuccess(old, At(1002));
  EXPECT_EQ(breaker.Snapshot(At(1002)).consecutive_failures, 2);
  Fail(breaker, 1, At(1003));
  EXPECT_EQ(breaker.WantsEjection(At(1003)), EjectReason::kConsecutive);
}

TEST(CircuitBreakerTest, StaleCancelLeavesTheProbeOut) {
  CircuitBreaker breaker(TestConfig());
  const CircuitTicket old = *breaker.TryAcquire(At(0));
  breaker.Eject(At(0), EjectReason::kConsecutive);
  ASSERT_TRUE(breaker.TryAcquireProbe(At(1000)).has_value());
  breaker.OnCancel(old);
  EXPECT_FALSE(breaker.TryAcquireProbe(At(1000)).has_value());
  // A probe ticket of an earlier probing round is stale too.
  CircuitBreaker other(TestConfig());
  other.Eject(At(0), EjectReason::kConsecutive);
  const CircuitTicket earlier = *other.TryAcquireProbe(At(1000));
  other.OnFailure(earlier, At(1000));
  ASSERT_TRUE(other.TryAcquireProbe(At(3000)).has_value());
  other.OnCancel(earlier);
  other.OnSuccess(earlier, At(3000));
  EXPECT_FALSE(other.TryAcquireProbe(At(3000)).has_value());
  EXPECT_EQ(other.Snapshot(At(3000)).state, CircuitState::kHalfOpen);
}

TEST(CircuitBreakerTest, EveryTransitionBumpsTheGenerationAndIsReported) {
  std::vector<CircuitTransition> calls;
  CircuitBreaker breaker(TestConfig(), [&calls](const CircuitTransition& t) {
    calls.push_back(t);
  });
  breaker.Eject(At(0), EjectReason::kFailureRate);
  FailProbe(breaker, At(1000));
  Return(breaker, At(3000));
  // Non-transitions report nothing.
  Fail(breaker, 2, At(3000));
  breaker.OnCancel(*breaker.TryAcquire(At(3000)));
  Succeed(breaker, 1, At(3000));
  breaker.Eject(At(3000), EjectReason::kConsecutive);

  using S = CircuitState;
  ASSERT_EQ(calls.size(), 6u);
  const S want[][2] = {{S::kClosed, S::kOpen},     {S::kOpen, S::kHalfOpen},
                       {S::kHalfOpen, S::kOpen},   {S::kOpen, S::kHalfOpen},
                       {S::kHalfOpen, S::kClosed}, {S::kClosed, S::kOpen}};
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].from, want[i][0]) << i;
    EXPECT_EQ(calls[i].to, want[i][1]) << i;
    EXPECT_EQ(calls[i].generation, i + 1) << i;
  }
  EXPECT_EQ(calls[0].reason, EjectReason::kFailureRate);
  EXPECT_EQ(calls[0].ejected_for, absl::Seconds(1));
  EXPECT_EQ(calls[2].reason, EjectReason::kProbe);
  EXPECT_EQ(calls[2].ejected_for, absl::Seconds(2));
  EXPECT_EQ(calls[5].reason, EjectReason::kConsecutive);
  EXPECT_EQ(calls[5].ejected_for, absl::Seconds(4));  // back only briefly
  EXPECT_EQ(breaker.Snapshot(At(3000)).generation, 6u);
}

TEST(CircuitBreakerTest, ListenerIsCalledWithoutTheLock) {
  std::vector<CircuitSnapshot> seen;
  CircuitBreaker* self = nullptr;
  CircuitBreaker breaker(TestConfig(), [&](const CircuitTransition&) {
    // Would deadlock if the mutex were held.
    seen.push_back(self->Snapshot(At(0)));
    self->TryAcquire(At(0));
  });
  self = &breaker;
  breaker.Eject(At(0), EjectReason::kConsecutive);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].state, CircuitState::kOpen);
  EXPECT_EQ(seen[0].generation, 1u);
  ASSERT_TRUE(breaker.TryAcquireProbe(At(1000)).has_value());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].state, CircuitState::kHalfOpen);
}

TEST(CircuitBreakerTest, ConcurrentProbersGetOneProbe) {
  constexpr int kThreads = 8;
  CircuitBreaker breaker(TestConfig());
  breaker.Eject(At(0), EjectReason::kConsecutive);
  std::atomic<int> probes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        if (breaker.TryAcquireProbe(At(1000)).has_value()) probes.fetch_add(1);
        if (breaker.TryAcquire(At(1000)).has_value()) probes.fetch_add(100);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(probes.load(), 1);
  EXPECT_EQ(breaker.Snapshot(At(1000)).probes, 1u);
}

TEST(CircuitBreakerTest, ConcurrentReportsKeepTheStateConsistent) {
  constexpr int kThreads = 4;
  std::atomic<uint64_t> transitions{0};
  CircuitConfig config = TestConfig();
  config.failure_threshold = 2;
  config.cooldown = absl::Milliseconds(1);
  config.max_ejection_time = absl::Milliseconds(4);
  config.probe_successes = 1;
  CircuitBreaker breaker(
      config, [&](const CircuitTransition&) { transitions.fetch_add(1); });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&breaker, t] {
      for (int i = 0; i < 2000; ++i) {
        const absl::Time now = At(i);
        std::optional<CircuitTicket> ticket = breaker.TryAcquire(now);
        if (!ticket.has_value()) ticket = breaker.TryAcquireProbe(now);
        if (!ticket.has_value()) continue;
        switch ((i + t) % 3) {
          case 0:
            breaker.OnFailure(*ticket, now);
            if (std::optional<EjectReason> reason =
                    breaker.WantsEjection(now)) {
              breaker.Eject(now, *reason);
            }
            break;
          case 1:
            breaker.OnSuccess(*ticket, now);
            break;
          default:
            breaker.OnCancel(*ticket);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const CircuitSnapshot snapshot = breaker.Snapshot(At(2000));
  EXPECT_GT(transitions.load(), 0u);
  EXPECT_EQ(snapshot.generation, transitions.load());
  uint64_t ejections = 0;
  for (uint64_t n : snapshot.ejections) ejections += n;
  EXPECT_EQ(snapshot.probe_failures,
            snapshot.ejections[static_cast<int>(EjectReason::kProbe)]);
  EXPECT_LE(ejections, snapshot.generation);
}

// One field of a valid config set to `value` is rejected (or not): the
// field its error names, or "ok".
template <typename T>
std::string FieldWith(T CircuitConfig::*field, T value) {
  CircuitConfig config = TestConfig();
  config.*field = value;
  const absl::Status status = ValidateCircuitConfig(config);
  if (status.ok()) return "ok";
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  return std::string(status.message().substr(0, status.message().find(':')));
}

TEST(CircuitConfigTest, ValidationNamesTheFieldAtEachEdge) {
  const absl::Duration ns = absl::Nanoseconds(1);
  const absl::Duration hour = absl::Hours(1);
  const double nan = std::nan("");
  EXPECT_TRUE(ValidateCircuitConfig(CircuitConfig{}).ok());
  EXPECT_TRUE(ValidateCircuitConfig(TestConfig()).ok());

  EXPECT_EQ(FieldWith(&CircuitConfig::failure_threshold, 1), "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::failure_threshold, 0),
            "failure_threshold");

  EXPECT_EQ(FieldWith(&CircuitConfig::cooldown, ns), "ok");
  for (absl::Duration bad :
       {absl::ZeroDuration(), -absl::Seconds(1), absl::InfiniteDuration()}) {
    EXPECT_EQ(FieldWith(&CircuitConfig::cooldown, bad), "cooldown");
  }

  EXPECT_EQ(FieldWith(&CircuitConfig::failure_rate, 1.0), "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::failure_rate, 1e-9), "ok");
  for (double bad : {0.0, -0.1, 1.0001, nan}) {
    EXPECT_EQ(FieldWith(&CircuitConfig::failure_rate, bad),
              "ejection_failure_rate")
        << bad;
  }

  EXPECT_EQ(FieldWith(&CircuitConfig::min_requests, 1), "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::min_requests, 1000000), "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::min_requests, 0),
            "ejection_min_requests");
  EXPECT_EQ(FieldWith(&CircuitConfig::min_requests, 1000001),
            "ejection_min_requests");

  EXPECT_EQ(FieldWith(&CircuitConfig::window, absl::Milliseconds(100)), "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::window, hour), "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::window, absl::Milliseconds(100) - ns),
            "ejection_window");
  EXPECT_EQ(FieldWith(&CircuitConfig::window, hour + ns), "ejection_window");

  // TestConfig's cooldown is 1 s.
  EXPECT_EQ(FieldWith(&CircuitConfig::max_ejection_time, absl::Seconds(1)),
            "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::max_ejection_time, hour), "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::max_ejection_time, absl::Seconds(1) - ns),
            "max_ejection_time");
  EXPECT_EQ(FieldWith(&CircuitConfig::max_ejection_time, hour + ns),
            "max_ejection_time");

  EXPECT_EQ(FieldWith(&CircuitConfig::probe_successes, 1), "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::probe_successes, 100), "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::probe_successes, 0), "probe_successes");
  EXPECT_EQ(FieldWith(&CircuitConfig::probe_successes, 101), "probe_successes");

  EXPECT_EQ(FieldWith(&CircuitConfig::ramp_up, absl::ZeroDuration()), "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::ramp_up, hour), "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::ramp_up, -ns), "ramp_up");
  EXPECT_EQ(FieldWith(&CircuitConfig::ramp_up, hour + ns), "ramp_up");

  EXPECT_EQ(FieldWith(&CircuitConfig::max_ejected_share, 0.0), "ok");
  EXPECT_EQ(FieldWith(&CircuitConfig::max_ejected_share, 1.0), "ok");
  for (double bad : {-0.01, 1.01, nan}) {
    EXPECT_EQ(FieldWith(&CircuitConfig::max_ejected_share, bad),
              "max_ejected_share")
        << bad;
  }
}

TEST(CircuitConfigTest, MessagesSayWhatIsWrong) {
  CircuitConfig config = TestConfig();
  config.failure_threshold = 0;
  EXPECT_EQ(ValidateCircuitConfig(config).message(),
            "failure_threshold: must be at least 1, got 0");
  config = TestConfig();
  config.window = absl::Milliseconds(50);
  EXPECT_EQ(ValidateCircuitConfig(config).message(),
            "ejection_window: must be in [100ms, 1h], got 50ms");
  config = TestConfig();
  config.max_ejection_time = absl::Milliseconds(500);
  EXPECT_EQ(ValidateCircuitConfig(config).message(),
            "max_ejection_time: must be in [cooldown (1s), 1h], got 500ms");
}

}  // namespace
}  // namespace tailgate::hedge
