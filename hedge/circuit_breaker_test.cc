#include "hedge/circuit_breaker.h"

#include <atomic>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

absl::Time At(int ms) { return absl::UnixEpoch() + absl::Milliseconds(ms); }

constexpr CircuitConfig kConfig{3, absl::Seconds(1)};

// Fails `n` fresh tickets at `now`.
void Fail(CircuitBreaker& breaker, int n, absl::Time now) {
  for (int i = 0; i < n; ++i) {
    std::optional<CircuitTicket> ticket = breaker.TryAcquire(now);
    ASSERT_TRUE(ticket.has_value());
    breaker.OnFailure(*ticket, now);
  }
}

// Opens `breaker` (closed, config kConfig) at `now`.
void Open(CircuitBreaker& breaker, absl::Time now) {
  Fail(breaker, kConfig.failure_threshold, now);
  ASSERT_EQ(breaker.Snapshot().state, CircuitState::kOpen);
}

TEST(CircuitConfigTest, RejectionNamesTheField) {
  EXPECT_TRUE(ValidateCircuitConfig(CircuitConfig{}).ok());
  EXPECT_TRUE(ValidateCircuitConfig({1, absl::Nanoseconds(1)}).ok());
  EXPECT_EQ(ValidateCircuitConfig({0, absl::Seconds(1)}).message(),
            "failure_threshold: must be at least 1, got 0");
  for (absl::Duration bad :
       {absl::ZeroDuration(), absl::Seconds(-1), absl::InfiniteDuration()}) {
    const absl::Status status = ValidateCircuitConfig({5, bad});
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(status.message(), "cooldown: "))
        << status.message();
  }
}

TEST(CircuitBreakerTest, StateNames) {
  EXPECT_STREQ(CircuitStateName(CircuitState::kClosed), "closed");
  EXPECT_STREQ(CircuitStateName(CircuitState::kOpen), "open");
  EXPECT_STREQ(CircuitStateName(CircuitState::kHalfOpen), "half_open");
}

TEST(CircuitBreakerTest, ClosedGrantsPlainTickets) {
  CircuitBreaker breaker(kConfig);
  EXPECT_TRUE(breaker.IsEligible(At(0)));
  for (int i = 0; i < 3; ++i) {
    std::optional<CircuitTicket> ticket = breaker.TryAcquire(At(0));
    ASSERT_TRUE(ticket.has_value());
    EXPECT_FALSE(ticket->probe);
    EXPECT_EQ(ticket->generation, 0u);
  }
}

TEST(CircuitBreakerTest, OpensAfterThresholdConsecutiveFailures) {
  CircuitBreaker breaker(kConfig);
  Fail(breaker, 2, At(0));
  EXPECT_EQ(breaker.Snapshot().state, CircuitState::kClosed);
  EXPECT_EQ(breaker.Snapshot().consecutive_failures, 2);
  Fail(breaker, 1, At(0));
  const CircuitSnapshot snapshot = breaker.Snapshot();
  EXPECT_EQ(snapshot.state, CircuitState::kOpen);
  EXPECT_EQ(snapshot.generation, 1u);
  EXPECT_FALSE(breaker.IsEligible(At(0)));
  EXPECT_FALSE(breaker.TryAcquire(At(0)).has_value());
}

TEST(CircuitBreakerTest, SuccessResetsConsecutiveFailures) {
  CircuitBreaker breaker(kConfig);
  Fail(breaker, 2, At(0));
  breaker.OnSuccess(*breaker.TryAcquire(At(0)), At(0));
  EXPECT_EQ(breaker.Snapshot().consecutive_failures, 0);
  Fail(breaker, 2, At(0));
  EXPECT_EQ(breaker.Snapshot().state, CircuitState::kClosed);
  Fail(breaker, 1, At(0));
  EXPECT_EQ(breaker.Snapshot().state, CircuitState::kOpen);
}

TEST(CircuitBreakerTest, OpenRefusesUntilCooldownThenGrantsOneProbe) {
  CircuitBreaker breaker(kConfig);
  Open(breaker, At(0));
  EXPECT_FALSE(breaker.IsEligible(At(999)));
  EXPECT_FALSE(breaker.TryAcquire(At(999)).has_value());
  EXPECT_EQ(breaker.Snapshot().state, CircuitState::kOpen);

  EXPECT_TRUE(breaker.IsEligible(At(1000)));
  std::optional<CircuitTicket> probe = breaker.TryAcquire(At(1000));
  ASSERT_TRUE(probe.has_value());
  EXPECT_TRUE(probe->probe);
  EXPECT_EQ(probe->generation, 2u);
  EXPECT_EQ(breaker.Snapshot().state, CircuitState::kHalfOpen);

  // The probe is exclusive.
  EXPECT_FALSE(breaker.IsEligible(At(5000)));
  EXPECT_FALSE(breaker.TryAcquire(At(5000)).has_value());
}

TEST(CircuitBreakerTest, ProbeSuccessCloses) {
  CircuitBreaker breaker(kConfig);
  Open(breaker, At(0));
  const CircuitTicket probe = *breaker.TryAcquire(At(1000));
  breaker.OnSuccess(probe, At(1010));
  const CircuitSnapshot snapshot = breaker.Snapshot();
  EXPECT_EQ(snapshot.state, CircuitState::kClosed);
  EXPECT_EQ(snapshot.generation, 3u);
  EXPECT_EQ(snapshot.consecutive_failures, 0);
  std::optional<CircuitTicket> ticket = breaker.TryAcquire(At(1010));
  ASSERT_TRUE(ticket.has_value());
  EXPECT_FALSE(ticket->probe);
  EXPECT_TRUE(breaker.TryAcquire(At(1010)).has_value());
}

TEST(CircuitBreakerTest, ProbeFailureReopensForAFreshCooldown) {
  CircuitBreaker breaker(kConfig);
  Open(breaker, At(0));
  const CircuitTicket probe = *breaker.TryAcquire(At(1000));
  breaker.OnFailure(probe, At(1500));
  EXPECT_EQ(breaker.Snapshot().state, CircuitState::kOpen);
  EXPECT_EQ(breaker.Snapshot().generation, 3u);
  // Counted from the probe's failure, not from the first opening.
  EXPECT_FALSE(breaker.TryAcquire(At(2499)).has_value());
  std::optional<CircuitTicket> next = breaker.TryAcquire(At(2500));
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(next->probe);
}

TEST(CircuitBreakerTest, CancelInClosedIsNeutral) {
  CircuitBreaker breaker(kConfig);
  Fail(breaker, 2, At(0));
  for (int i = 0; i < 5; ++i) breaker.OnCancel(*breaker.TryAcquire(At(0)));
  CircuitSnapshot snapshot = breaker.Snapshot();
  EXPECT_EQ(snapshot.state, CircuitState::kClosed);
  EXPECT_EQ(snapshot.generation, 0u);
  EXPECT_EQ(snapshot.consecutive_failures, 2);  // neither reset nor raised
  Fail(breaker, 1, At(0));
  EXPECT_EQ(breaker.Snapshot().state, CircuitState::kOpen);
}

TEST(CircuitBreakerTest, CancellingTheProbeReleasesIt) {
  CircuitBreaker breaker(kConfig);
  Open(breaker, At(0));
  const CircuitTicket probe = *breaker.TryAcquire(At(1000));
  breaker.OnCancel(probe);
  CircuitSnapshot snapshot = breaker.Snapshot();
  EXPECT_EQ(snapshot.state, CircuitState::kHalfOpen);
  EXPECT_EQ(snapshot.generation, 2u);  // no verdict, no transition
  EXPECT_TRUE(breaker.IsEligible(At(1000)));
  std::optional<CircuitTicket> second = breaker.TryAcquire(At(1000));
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->probe);
  EXPECT_FALSE(breaker.TryAcquire(At(1000)).has_value());
  breaker.OnSuccess(*second, At(1001));
  EXPECT_EQ(breaker.Snapshot().state, CircuitState::kClosed);
}

TEST(CircuitBreakerTest, CancellingAStaleTicketLeavesTheProbeOut) {
  CircuitBreaker breaker(kConfig);
  const CircuitTicket old = *breaker.TryAcquire(At(0));
  Open(breaker, At(0));
  ASSERT_TRUE(breaker.TryAcquire(At(1000)).has_value());  // the probe
  breaker.OnCancel(old);
  EXPECT_FALSE(breaker.TryAcquire(At(1000)).has_value());
}

TEST(CircuitBreakerTest, StaleSuccessCannotCloseALaterOpenedCircuit) {
  CircuitBreaker breaker(kConfig);
  const CircuitTicket slow = *breaker.TryAcquire(At(0));
  Open(breaker, At(10));
  breaker.OnSuccess(slow, At(20));
  EXPECT_EQ(breaker.Snapshot().state, CircuitState::kOpen);
  EXPECT_EQ(breaker.Snapshot().generation, 1u);

  // Nor can it close the half-open circuit, or free its probe.
  ASSERT_TRUE(breaker.TryAcquire(At(1010)).has_value());
  breaker.OnSuccess(slow, At(1020));
  EXPECT_EQ(breaker.Snapshot().state, CircuitState::kHalfOpen);
  EXPECT_FALSE(breaker.TryAcquire(At(1020)).has_value());
}

TEST(CircuitBreakerTest, StaleFailureAfterRecloseDoesNotCount) {
  CircuitBreaker breaker({1, absl::Seconds(1)});
  const CircuitTicket old = *breaker.TryAcquire(At(0));
  breaker.OnFailure(*breaker.TryAcquire(At(0)), At(0));        // opens
  breaker.OnSuccess(*breaker.TryAcquire(At(1000)), At(1000));  // closes
  ASSERT_EQ(breaker.Snapshot().state, CircuitState::kClosed);
  breaker.OnFailure(old, At(1001));
  const CircuitSnapshot snapshot = breaker.Snapshot();
  EXPECT_EQ(snapshot.state, CircuitState::kClosed);
  EXPECT_EQ(snapshot.consecutive_failures, 0);
  EXPECT_EQ(snapshot.generation, 3u);
}

TEST(CircuitBreakerTest, StaleSuccessDoesNotResetFailuresAfterReclose) {
  CircuitBreaker breaker(kConfig);
  const CircuitTicket old = *breaker.TryAcquire(At(0));
  Open(breaker, At(0));
  breaker.OnSuccess(*breaker.TryAcquire(At(1000)), At(1000));  // closes
  Fail(breaker, 2, At(1001));
  breaker.OnSuccess(old, At(1002));
  EXPECT_EQ(breaker.Snapshot().consecutive_failures, 2);
  Fail(breaker, 1, At(1003));
  EXPECT_EQ(breaker.Snapshot().state, CircuitState::kOpen);
}

TEST(CircuitBreakerTest, EveryTransitionBumpsTheGenerationAndIsReported) {
  using Call = std::tuple<CircuitState, CircuitState, uint64_t>;
  std::vector<Call> calls;
  CircuitBreaker breaker(kConfig, [&calls](CircuitState from, CircuitState to,
                                           uint64_t generation) {
    calls.emplace_back(from, to, generation);
  });
  Open(breaker, At(0));
  breaker.OnFailure(*breaker.TryAcquire(At(1000)), At(1000));
  breaker.OnSuccess(*breaker.TryAcquire(At(2000)), At(2000));
  // Non-transitions report nothing.
  Fail(breaker, 2, At(2000));
  breaker.OnCancel(*breaker.TryAcquire(At(2000)));
  breaker.OnSuccess(*breaker.TryAcquire(At(2000)), At(2000));

  using S = CircuitState;
  EXPECT_EQ(calls, (std::vector<Call>{{S::kClosed, S::kOpen, 1},
                                      {S::kOpen, S::kHalfOpen, 2},
                                      {S::kHalfOpen, S::kOpen, 3},
                                      {S::kOpen, S::kHalfOpen, 4},
                                      {S::kHalfOpen, S::kClosed, 5}}));
  EXPECT_EQ(breaker.Snapshot().generation, 5u);
}

TEST(CircuitBreakerTest, ListenerIsCalledWithoutTheLock) {
  std::vector<CircuitSnapshot> seen;
  CircuitBreaker* self = nullptr;
  CircuitBreaker breaker(kConfig, [&](CircuitState, CircuitState, uint64_t) {
    // Would deadlock if the mutex were held.
    seen.push_back(self->Snapshot());
  });
  self = &breaker;
  Open(breaker, At(0));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].state, CircuitState::kOpen);
  EXPECT_EQ(seen[0].generation, 1u);
}

TEST(CircuitBreakerTest, ConcurrentAcquirersGetOneProbe) {
  constexpr int kThreads = 8;
  CircuitBreaker breaker(kConfig);
  Open(breaker, At(0));
  std::atomic<int> probes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        if (breaker.TryAcquire(At(1000)).has_value()) probes.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(probes.load(), 1);
}

TEST(CircuitBreakerTest, ConcurrentReportsKeepTheStateConsistent) {
  constexpr int kThreads = 4;
  std::atomic<uint64_t> transitions{0};
  CircuitBreaker breaker(
      {2, absl::Milliseconds(1)},
      [&](CircuitState, CircuitState, uint64_t) { transitions.fetch_add(1); });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&breaker, t] {
      for (int i = 0; i < 2000; ++i) {
        const absl::Time now = At(i);
        std::optional<CircuitTicket> ticket = breaker.TryAcquire(now);
        if (!ticket.has_value()) continue;
        switch ((i + t) % 3) {
          case 0:
            breaker.OnFailure(*ticket, now);
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
  EXPECT_EQ(breaker.Snapshot().generation, transitions.load());
}

}  // namespace
}  // namespace tailgate::hedge
