#include "hedge/health/replica_picker.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

absl::Time At(int ms) { return absl::UnixEpoch() + absl::Milliseconds(ms); }

// Three failures in a row (or half of ten outcomes) want an ejection;
// ejected for 1 s; one probe to return; no ramp-up unless a test sets one.
CircuitConfig PickerConfig() {
  CircuitConfig config;
  config.failure_threshold = 3;
  config.cooldown = absl::Seconds(1);
  config.failure_rate = 0.5;
  config.min_requests = 10;
  config.probe_successes = 1;
  config.ramp_up = absl::ZeroDuration();
  return config;
}

// `n` replicas (breaker and load each) and a picker over them.
class Replicas {
 public:
  explicit Replicas(size_t n, double max_ejected_share = 0.5,
                    const CircuitConfig& config = PickerConfig()) {
    std::vector<CircuitBreaker*> breakers;
    std::vector<ReplicaLoad*> loads;
    for (size_t i = 0; i < n; ++i) {
      breakers_.push_back(std::make_unique<CircuitBreaker>(config));
      loads_.push_back(std::make_unique<ReplicaLoad>());
      breakers.push_back(breakers_.back().get());
      loads.push_back(loads_.back().get());
    }
    picker_ =
        std::make_unique<ReplicaPicker>(breakers, loads, max_ejected_share);
  }

  ReplicaPicker& picker() { return *picker_; }
  CircuitBreaker& breaker(size_t replica) { return *breakers_[replica]; }
  ReplicaLoad& load(size_t replica) { return *loads_[replica]; }
  CircuitState state(size_t replica, absl::Time now) {
    return breaker(replica).Snapshot(now).state;
  }

  // Ejects `replica` directly, past the guard rails.
  void Eject(size_t replica, absl::Time now) {
    breaker(replica).Eject(now, EjectReason::kConsecutive);
  }

  // `n` failed attempts of `replica`, reported through the picker.
  void Fail(size_t replica, int n, absl::Time now) {
    for (int i = 0; i < n; ++i) {
      std::optional<CircuitTicket> ticket = breaker(replica).TryAcquire(now);
      ASSERT_TRUE(ticket.has_value());
      picker().OnFailure(replica, *ticket, now);
    }
  }

  void Succeed(size_t replica, int n, absl::Time now) {
    for (int i = 0; i < n; ++i) {
      std::optional<CircuitTicket> ticket = breaker(replica).TryAcquire(now);
      ASSERT_TRUE(ticket.has_value());
      picker().OnSuccess(replica, *ticket, now);
    }
  }

  // Sets `replica`'s latency estimate at `now` (its first sample).
  void SetLatency(size_t replica, absl::Duration latency, absl::Time now) {
    load(replica).RestartFrom(now, latency);
  }

 private:
  std::vector<std::unique_ptr<CircuitBreaker>> breakers_;
  std::vector<std::unique_ptr<ReplicaLoad>> loads_;
  std::unique_ptr<ReplicaPicker> picker_;
};

std::vector<size_t> PrimaryPicks(ReplicaPicker& picker, int n, absl::Time now) {
  std::vector<size_t> picks;
  for (int i = 0; i < n; ++i) {
    std::optional<ReplicaPick> pick = picker.PickPrimary(now);
    picks.push_back(pick.has_value() ? pick->replica : 99);
  }
  return picks;
}

// How many of `n` primaries at `now` each replica gets.
std::vector<int> PrimaryCounts(Replicas& replicas, size_t size, int n,
                               absl::Time now) {
  std::vector<int> counts(size);
  for (size_t replica : PrimaryPicks(replicas.picker(), n, now)) {
    if (replica < size) ++counts[replica];
  }
  return counts;
}

TEST(ReplicaPickerTest, PrimaryRotatesPerRead) {
  Replicas replicas(3);
  EXPECT_EQ(replicas.picker().size(), 3u);
  EXPECT_EQ(PrimaryPicks(replicas.picker(), 7, At(0)),
            (std::vector<size_t>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(ReplicaPickerTest, EqualReplicasStayBalancedExactly) {
  // Reads one after another, every replica answering in 10 ms: their
  // estimates differ only by how long ago each answered.
  constexpr int kReads = 3000;
  Replicas replicas(3);
  std::vector<size_t> picks;
  for (int i = 0; i < kReads; ++i) {
    const absl::Time now = At(i * 4);
    std::optional<ReplicaPick> pick = replicas.picker().PickPrimary(now);
    ASSERT_TRUE(pick.has_value());
    picks.push_back(pick->replica);
    ReplicaLoad& load = replicas.load(pick->replica);
    load.Begin(now);
    load.End(now, now + absl::Milliseconds(10), ReplicaLoad::Ending::kAnswered);
    replicas.picker().OnSuccess(pick->replica, pick->ticket,
                                now + absl::Milliseconds(10));
  }
  for (int i = 0; i < kReads; ++i) {
    ASSERT_EQ(picks[i], static_cast<size_t>(i % 3)) << i;
  }
}

TEST(ReplicaPickerTest, ConcurrentReadsShareTheRotationEvenly) {
  constexpr int kThreads = 4;
  constexpr int kPicksPerThread = 3000;
  Replicas replicas(3);
  std::vector<std::vector<int>> counts(kThreads, std::vector<int>(3));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&replicas, &counts, t] {
      for (int i = 0; i < kPicksPerThread; ++i) {
        ++counts[t][replicas.picker().PickPrimary(At(0))->replica];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t replica = 0; replica < 3; ++replica) {
    int total = 0;
    for (int t = 0; t < kThreads; ++t) total += counts[t][replica];
    EXPECT_EQ(total, kThreads * kPicksPerThread / 3) << replica;
  }
}

TEST(ReplicaPickerTest, CostsWithinTheToleranceCountAsEqual) {
  Replicas replicas(2);
  replicas.SetLatency(0, absl::Milliseconds(10), At(0));
  replicas.SetLatency(1, absl::Milliseconds(14), At(0));  // < 1.5 x
  EXPECT_EQ(PrimaryCounts(replicas, 2, 100, At(0)), (std::vector<int>{50, 50}));
}

TEST(ReplicaPickerTest, SlowReplicaGetsNoPrimaryOfTwo) {
  Replicas replicas(2);
  replicas.SetLatency(0, absl::Milliseconds(50), At(0));
  replicas.SetLatency(1, absl::Milliseconds(10), At(0));
  EXPECT_EQ(PrimaryCounts(replicas, 2, 100, At(0)), (std::vector<int>{0, 100}));
}

// An open-loop simulation: a read every `every_ms`, each replica answering
// in its own latency, the loads fed as the transport feeds them. Returns
// the primaries each replica got.
std::vector<int> SimulatedShares(Replicas& replicas,
                                 const std::vector<int>& latency_ms,
                                 int every_ms, int reads) {
  struct InFlight {
    int ends_ms;
    int started_ms;
    size_t replica;
    bool operator>(const InFlight& other) const {
      return ends_ms > other.ends_ms;
    }
  };
  std::priority_queue<InFlight, std::vector<InFlight>, std::greater<InFlight>>
      in_flight;
  std::vector<int> counts(latency_ms.size());
  for (int i = 0; i < reads; ++i) {
    const int now_ms = i * every_ms;
    while (!in_flight.empty() && in_flight.top().ends_ms <= now_ms) {
      const InFlight done = in_flight.top();
      in_flight.pop();
      replicas.load(done.replica)
          .End(At(done.started_ms), At(done.ends_ms),
               ReplicaLoad::Ending::kAnswered);
    }
    std::optional<ReplicaPick> pick = replicas.picker().PickPrimary(At(now_ms));
    if (!pick.has_value()) continue;
    ++counts[pick->replica];
    replicas.load(pick->replica).Begin(At(now_ms));
    in_flight.push({now_ms + latency_ms[pick->replica], now_ms, pick->replica});
  }
  return counts;
}

TEST(ReplicaPickerTest, SlowReplicaGetsAShareInLineWithItsCost) {
  // Two replicas answer in 10 ms, the third in 20 or 40 ms; a read every
  // 2 ms keeps several in flight on each, and what is in flight raises
  // the cost, so the slow one is not starved, but the slower it is the
  // less it gets.
  constexpr int kReads = 30000;
  Replicas twice(3);
  const std::vector<int> by_20 =
      SimulatedShares(twice, {10, 20, 10}, /*every_ms=*/2, kReads);
  Replicas four_times(3);
  const std::vector<int> by_40 =
      SimulatedShares(four_times, {10, 40, 10}, /*every_ms=*/2, kReads);
  EXPECT_GT(by_20[1], kReads / 12);
  EXPECT_LT(by_20[1], kReads / 4);
  EXPECT_GT(by_40[1], kReads / 100);
  EXPECT_LT(by_40[1], by_20[1] / 2);
  for (const std::vector<int>& shares : {by_20, by_40}) {
    EXPECT_NEAR(shares[0], shares[2], kReads / 10);
  }

  // Three equal replicas: a third each.
  Replicas equal(3);
  for (int share : SimulatedShares(equal, {10, 10, 10}, 2, kReads)) {
    EXPECT_NEAR(share, kReads / 3, kReads / 100);
  }
}

TEST(ReplicaPickerTest, HungReplicaIsAvoided) {
  Replicas replicas(3);
  for (size_t i = 0; i < 3; ++i) {
    replicas.SetLatency(i, absl::Milliseconds(10), At(0));
  }
  // One attempt on replica 1 has been out for a second: a mean age far
  // above what the others cost, before it ends.
  replicas.load(1).Begin(At(0));
  const std::vector<int> counts = PrimaryCounts(replicas, 3, 300, At(1000));
  EXPECT_EQ(counts[1], 0);
  EXPECT_EQ(counts[0] + counts[2], 300);
  // It is not the alternate either.
  EXPECT_EQ(replicas.picker().PickAlternate(0, At(1000))->replica, 2u);

  Replicas pair(2);
  pair.load(0).Begin(At(0));
  EXPECT_EQ(PrimaryCounts(pair, 2, 100, At(1000)), (std::vector<int>{0, 100}));
}

TEST(ReplicaPickerTest, AlternateIsTheCheapestOther) {
  Replicas replicas(4);
  replicas.SetLatency(0, absl::Milliseconds(10), At(0));
  replicas.SetLatency(1, absl::Milliseconds(80), At(0));
  replicas.SetLatency(2, absl::Milliseconds(40), At(0));
  replicas.SetLatency(3, absl::Milliseconds(10), At(0));
  EXPECT_EQ(replicas.picker().PickAlternate(0, At(0))->replica, 3u);
  EXPECT_EQ(replicas.picker().PickAlternate(3, At(0))->replica, 0u);
  EXPECT_EQ(replicas.picker().PickAlternate(1, At(0))->replica, 3u);
  // The alternate does not move the primary rotation.
  EXPECT_EQ(replicas.picker().PickPrimary(At(0))->replica, 0u);

  // A tie (within kTolerance): the first after the excluded one.
  Replicas tie(4);
  tie.SetLatency(0, absl::Milliseconds(10), At(0));
  tie.SetLatency(1, absl::Milliseconds(80), At(0));
  tie.SetLatency(2, absl::Milliseconds(12), At(0));
  tie.SetLatency(3, absl::Milliseconds(10), At(0));
  EXPECT_EQ(tie.picker().PickAlternate(1, At(0))->replica, 2u);
}

TEST(ReplicaPickerTest, AlternateScanStartsAfterTheExcludedReplica) {
  Replicas replicas(4);
  EXPECT_EQ(replicas.picker().PickAlternate(1, At(0))->replica, 2u);
  EXPECT_EQ(replicas.picker().PickAlternate(3, At(0))->replica, 0u);
  EXPECT_EQ(replicas.picker().PickPrimary(At(0))->replica, 0u);
}

// Every size 2..5, every excluded replica, every set of ejected replicas.
TEST(ReplicaPickerTest, AlternateIsNeverTheExcludedReplica) {
  for (size_t n = 2; n <= 5; ++n) {
    for (size_t exclude = 0; exclude < n; ++exclude) {
      for (unsigned ejected = 0; ejected < (1u << n); ++ejected) {
        Replicas replicas(n);
        for (size_t i = 0; i < n; ++i) {
          if (ejected & (1u << i)) replicas.Eject(i, At(0));
        }
        std::optional<size_t> want;
        for (size_t step = 1; step < n && !want.has_value(); ++step) {
          const size_t i = (exclude + step) % n;
          if (!(ejected & (1u << i))) want = i;
        }
        SCOPED_TRACE(::testing::Message() << "n=" << n << " exclude=" << exclude
                                          << " ejected=" << ejected);
        EXPECT_EQ(replicas.picker().HasAlternate(exclude, At(1)),
                  want.has_value());
        std::optional<ReplicaPick> pick =
            replicas.picker().PickAlternate(exclude, At(1));
        ASSERT_EQ(pick.has_value(), want.has_value());
        if (pick.has_value()) {
          EXPECT_NE(pick->replica, exclude);
          EXPECT_EQ(pick->replica, *want);
          EXPECT_FALSE(pick->ticket.probe);
        }
      }
    }
  }
}

TEST(ReplicaPickerTest, PrimarySkipsEjectedReplicas) {
  Replicas replicas(3);
  replicas.Eject(1, At(0));
  // The rotation runs over the two that serve: they alternate, and share
  // the primaries evenly (not 2:1, as a rotation over all three would).
  EXPECT_EQ(PrimaryPicks(replicas.picker(), 4, At(0)),
            (std::vector<size_t>{0, 2, 0, 2}));
  // Past its ejection time it wants a probe, but reads still skip it.
  EXPECT_EQ(PrimaryPicks(replicas.picker(), 4, At(5000)),
            (std::vector<size_t>{0, 2, 0, 2}));
}

TEST(ReplicaPickerTest, PrimaryCarriesTheGrantedTicket) {
  Replicas replicas(2);
  replicas.Eject(0, At(0));
  std::optional<ReplicaPick> probe = replicas.picker().TakeProbe(At(1000));
  ASSERT_TRUE(probe.has_value());
  replicas.picker().OnSuccess(probe->replica, probe->ticket, At(1000));
  ASSERT_EQ(replicas.state(0, At(1000)), CircuitState::kClosed);
  std::optional<ReplicaPick> pick = replicas.picker().PickPrimary(At(1000));
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->replica, 0u);
  EXPECT_FALSE(pick->ticket.probe);
  EXPECT_EQ(pick->ticket.generation, 3u);
}

TEST(ReplicaPickerTest, AllEjectedGivesNoPickEvenPastTheirTime) {
  Replicas replicas(3);
  for (size_t i = 0; i < 3; ++i) replicas.Eject(i, At(0));
  for (int ms : {10, 1000, 60000}) {
    EXPECT_FALSE(replicas.picker().PickPrimary(At(ms)).has_value());
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_FALSE(replicas.picker().HasAlternate(i, At(ms)));
      EXPECT_FALSE(replicas.picker().PickAlternate(i, At(ms)).has_value());
    }
  }
}

TEST(ReplicaPickerTest, SingleReplicaHasNoAlternate) {
  Replicas replicas(1);
  EXPECT_EQ(replicas.picker().PickPrimary(At(0))->replica, 0u);
  EXPECT_FALSE(replicas.picker().HasAlternate(0, At(0)));
  EXPECT_FALSE(replicas.picker().PickAlternate(0, At(0)).has_value());
}

TEST(ReplicaPickerTest, RetiredReplicaIsNeverPickedAgain) {
  Replicas replicas(3);
  replicas.picker().Retire(1);
  EXPECT_EQ(PrimaryPicks(replicas.picker(), 4, At(0)),
            (std::vector<size_t>{0, 2, 0, 2}));
  std::optional<ReplicaPick> alternate =
      replicas.picker().PickAlternate(0, At(0));
  ASSERT_TRUE(alternate.has_value());
  EXPECT_EQ(alternate->replica, 2u);
  replicas.picker().Retire(2);
  EXPECT_FALSE(replicas.picker().HasAlternate(0, At(0)));
  EXPECT_FALSE(replicas.picker().PickAlternate(0, At(0)).has_value());
  replicas.picker().Retire(0);
  EXPECT_FALSE(replicas.picker().PickPrimary(At(0)).has_value());
}

TEST(ReplicaPickerTest, OneOfTwoMayBeEjectedNeverTheSecond) {
  for (double share : {0.5, 1.0}) {
    SCOPED_TRACE(share);
    Replicas replicas(2, share);
    replicas.Succeed(1, 5, At(0));
    replicas.Fail(0, 3, At(0));
    EXPECT_EQ(replicas.state(0, At(0)), CircuitState::kOpen);
    EXPECT_EQ(replicas.breaker(0)
                  .Snapshot(At(0))
                  .ejections[static_cast<int>(EjectReason::kConsecutive)],
              1u);
    // The last serving replica stays, however it fails.
    replicas.Fail(1, 20, At(10));
    EXPECT_EQ(replicas.breaker(1).WantsEjection(At(10)),
              EjectReason::kConsecutive);
    EXPECT_EQ(replicas.state(1, At(10)), CircuitState::kClosed);
    EXPECT_TRUE(replicas.picker().PickPrimary(At(10)).has_value());
  }
}

TEST(ReplicaPickerTest, ZeroShareEjectsNothing) {
  Replicas replicas(3, /*max_ejected_share=*/0);
  replicas.Fail(0, 50, At(0));
  EXPECT_EQ(replicas.breaker(0).WantsEjection(At(0)),
            EjectReason::kConsecutive);
  EXPECT_EQ(replicas.state(0, At(0)), CircuitState::kClosed);
}

TEST(ReplicaPickerTest, HalfOfFourAtMostTwoEjected) {
  Replicas replicas(4, 0.5);
  replicas.Succeed(3, 10, At(0));
  for (size_t i = 0; i < 3; ++i) replicas.Fail(i, 3, At(0));
  EXPECT_EQ(replicas.state(0, At(0)), CircuitState::kOpen);
  EXPECT_EQ(replicas.state(1, At(0)), CircuitState::kOpen);
  EXPECT_EQ(replicas.state(2, At(0)), CircuitState::kClosed);
  // Probing counts as out too.
  ASSERT_TRUE(replicas.picker().TakeProbe(At(1000)).has_value());
  replicas.Fail(2, 1, At(1000));
  EXPECT_EQ(replicas.state(2, At(1000)), CircuitState::kClosed);
  // Once one is back, the next failure of the wanting one ejects it.
  std::optional<ReplicaPick> probe = replicas.picker().TakeProbe(At(1000));
  ASSERT_TRUE(probe.has_value());
  replicas.picker().OnSuccess(probe->replica, probe->ticket, At(1000));
  replicas.Fail(2, 1, At(1001));
  EXPECT_EQ(replicas.state(2, At(1001)), CircuitState::kOpen);

  // floor(0.5 * 3) = 1 of three.
  Replicas three(3, 0.5);
  three.Succeed(2, 10, At(0));
  three.Fail(0, 3, At(0));
  three.Fail(1, 3, At(0));
  EXPECT_EQ(three.state(0, At(0)), CircuitState::kOpen);
  EXPECT_EQ(three.state(1, At(0)), CircuitState::kClosed);
}

TEST(ReplicaPickerTest, CorrelatedFailuresEjectNothing) {
  // Both replicas fail alike (every replica slowed down, or a bad deploy
  // everywhere): ejecting one would only move its load onto the other.
  Replicas replicas(2, 1.0);
  for (int i = 0; i < 20; ++i) {
    replicas.Fail(0, 1, At(i));
    replicas.Fail(1, 1, At(i));
  }
  EXPECT_TRUE(replicas.breaker(0).WantsEjection(At(20)).has_value());
  EXPECT_EQ(replicas.state(0, At(20)), CircuitState::kClosed);
  EXPECT_EQ(replicas.state(1, At(20)), CircuitState::kClosed);

  // Nor when the only peer with few failures wants an ejection itself.
  Replicas others(3, 1.0);
  others.Succeed(1, 30, At(0));
  for (int i = 0; i < 3; ++i) {  // a run of three, though 3 of 33 failed
    CircuitBreaker& one = others.breaker(1);
    one.OnFailure(*one.TryAcquire(At(0)), At(0));
  }
  others.Fail(2, 1, At(0));  // one failure out of one
  others.Fail(0, 3, At(0));
  EXPECT_EQ(others.state(0, At(0)), CircuitState::kClosed);

  // A peer with at most half the failure rate is clearly healthier.
  Replicas gray(2, 1.0);
  for (int i = 0; i < 20; ++i) {
    gray.Fail(0, 1, At(i));
    if (gray.state(0, At(i)) != CircuitState::kClosed) break;
    gray.Succeed(0, 1, At(i));
    gray.Fail(1, 1, At(i));
    gray.Succeed(1, 3, At(i));
  }
  EXPECT_EQ(gray.state(0, At(20)), CircuitState::kOpen);
  EXPECT_EQ(gray.breaker(0)
                .Snapshot(At(20))
                .ejections[static_cast<int>(EjectReason::kFailureRate)],
            1u);
}

TEST(ReplicaPickerTest, OneKeptServingByTheCapAloneIsDegraded) {
  // Two of three hang; floor(0.5 * 3) = 1 may be ejected.
  Replicas replicas(3, 0.5);
  replicas.Succeed(2, 10, At(0));
  replicas.Fail(0, 3, At(0));
  replicas.Fail(1, 3, At(0));
  EXPECT_EQ(replicas.state(0, At(0)), CircuitState::kOpen);
  EXPECT_EQ(replicas.state(1, At(0)), CircuitState::kClosed);
  ReplicaPicker& picker = replicas.picker();
  EXPECT_FALSE(picker.Degraded(0));
  EXPECT_TRUE(picker.Degraded(1));
  EXPECT_FALSE(picker.Degraded(2));
  // No extra attempt goes to it.
  EXPECT_FALSE(picker.HasAlternate(2, At(0)));
  EXPECT_FALSE(picker.PickAlternate(2, At(0)).has_value());
  EXPECT_TRUE(picker.HasAlternate(1, At(0)));
  // Primaries: a candidate one draw in ten, then half of the rotation.
  const std::vector<int> counts = PrimaryCounts(replicas, 3, 2000, At(0));
  EXPECT_EQ(counts[0], 0);
  EXPECT_GT(counts[1], 2000 * ReplicaPicker::kDegradedWeight / 2 / 3);
  EXPECT_LT(counts[1], 2000 * ReplicaPicker::kDegradedWeight / 2 * 2);
  EXPECT_EQ(counts[1] + counts[2], 2000);
  // It answers well again: a success ends its run, and with four outcomes
  // in the window (fewer than min_requests) it no longer wants ejection.
  replicas.Succeed(1, 1, At(10));
  EXPECT_FALSE(picker.Degraded(1));
  EXPECT_TRUE(picker.HasAlternate(2, At(10)));
  // Failing again, it is degraded again; once the cap allows, ejected.
  replicas.Fail(1, 3, At(20));
  EXPECT_TRUE(picker.Degraded(1));
  std::optional<ReplicaPick> probe = picker.TakeProbe(At(1000));
  ASSERT_TRUE(probe.has_value());
  picker.OnSuccess(probe->replica, probe->ticket, At(1000));
  replicas.Fail(1, 1, At(1001));
  EXPECT_EQ(replicas.state(1, At(1001)), CircuitState::kOpen);
  EXPECT_FALSE(picker.Degraded(1));
}

TEST(ReplicaPickerTest, NoneIsDegradedWhenAllFailAlikeOrEjectionIsOff) {
  Replicas alike(2, 1.0);
  for (int i = 0; i < 20; ++i) {
    alike.Fail(0, 1, At(i));
    alike.Fail(1, 1, At(i));
  }
  EXPECT_FALSE(alike.picker().Degraded(0));
  EXPECT_FALSE(alike.picker().Degraded(1));
  Replicas off(2, /*max_ejected_share=*/0);
  off.Succeed(1, 10, At(0));
  off.Fail(0, 10, At(0));
  EXPECT_FALSE(off.picker().Degraded(0));
}

TEST(ReplicaPickerTest, AnExtraAttemptGoesWhereAnswersComeFrom) {
  Replicas replicas(3);
  // Replica 1 has not answered yet: its cost, with no sample, is the
  // least. Replica 2 answered, in 10 ms.
  replicas.SetLatency(2, absl::Milliseconds(10), At(0));
  replicas.Succeed(2, 1, At(0));
  EXPECT_EQ(replicas.picker().PickAlternate(0, At(0))->replica, 2u);
  // Replica 2's last attempt failed: none has answered last, the cost
  // decides.
  replicas.Fail(2, 1, At(1));
  EXPECT_EQ(replicas.picker().PickAlternate(0, At(1))->replica, 1u);
  replicas.Succeed(1, 1, At(2));
  EXPECT_EQ(replicas.picker().PickAlternate(0, At(2))->replica, 1u);
  EXPECT_EQ(replicas.picker().PickAlternate(1, At(2))->replica, 0u);
}

TEST(ReplicaPickerTest, RetiredReplicasDoNotCountInTheGuardRails) {
  Replicas replicas(3, 1.0);
  replicas.picker().Retire(2);
  replicas.Fail(0, 3, At(0));
  EXPECT_EQ(replicas.state(0, At(0)), CircuitState::kOpen);
  replicas.Fail(1, 3, At(0));  // the last live one
  EXPECT_EQ(replicas.state(1, At(0)), CircuitState::kClosed);
}

TEST(ReplicaPickerTest, FailedProbeEjectsAgainWhateverTheGuardRails) {
  Replicas replicas(2, /*max_ejected_share=*/0);
  replicas.Eject(0, At(0));
  std::optional<ReplicaPick> probe = replicas.picker().TakeProbe(At(1000));
  ASSERT_TRUE(probe.has_value());
  replicas.picker().OnFailure(probe->replica, probe->ticket, At(1000));
  const CircuitSnapshot snapshot = replicas.breaker(0).Snapshot(At(1000));
  EXPECT_EQ(snapshot.state, CircuitState::kOpen);
  EXPECT_EQ(snapshot.ejections[static_cast<int>(EjectReason::kProbe)], 1u);
  EXPECT_EQ(replicas.breaker(0).ejected_until(), At(3000));
}

TEST(ReplicaPickerTest, RampingReplicaIsACandidateByItsWeight) {
  constexpr int kPicks = 4000;
  CircuitConfig config = PickerConfig();
  config.ramp_up = absl::Seconds(10);
  Replicas replicas(2, 0.5, config);
  replicas.Eject(0, At(0));
  std::optional<ReplicaPick> probe = replicas.picker().TakeProbe(At(1000));
  ASSERT_TRUE(probe.has_value());
  replicas.picker().OnSuccess(0, probe->ticket, At(1000));  // back at 1 s
  // Equal loads: replica 0 is first in half the rotations, and keeps
  // them with the probability of its weight.
  for (int ms : {1000, 6000, 11000}) {
    const double weight = replicas.breaker(0).Weight(At(ms));
    SCOPED_TRACE(::testing::Message() << "weight " << weight);
    const std::vector<int> counts = PrimaryCounts(replicas, 2, kPicks, At(ms));
    EXPECT_NEAR(counts[0], kPicks / 2 * weight, kPicks * 0.03);
    EXPECT_EQ(counts[0] + counts[1], kPicks);
  }
}

TEST(ReplicaPickerTest, RampingReplicaAloneIsStillPicked) {
  CircuitConfig config = PickerConfig();
  config.ramp_up = absl::Seconds(10);
  Replicas replicas(1, 0.5, config);
  replicas.Eject(0, At(0));
  std::optional<ReplicaPick> probe = replicas.picker().TakeProbe(At(1000));
  ASSERT_TRUE(probe.has_value());
  replicas.picker().OnSuccess(0, probe->ticket, At(1000));
  ASSERT_DOUBLE_EQ(replicas.breaker(0).Weight(At(1000)),
                   CircuitBreaker::kMinWeight);
  EXPECT_EQ(PrimaryCounts(replicas, 1, 100, At(1000)), (std::vector<int>{100}));
}

TEST(ReplicaPickerTest, TakeProbeAfterTheEjectionTime) {
  Replicas replicas(3);
  EXPECT_EQ(replicas.picker().NextProbeDue(At(0)), absl::InfiniteFuture());
  EXPECT_FALSE(replicas.picker().TakeProbe(At(0)).has_value());
  replicas.Eject(1, At(0));    // until 1 s
  replicas.Eject(2, At(500));  // until 1.5 s
  EXPECT_EQ(replicas.picker().NextProbeDue(At(0)), At(1000));
  EXPECT_FALSE(replicas.picker().TakeProbe(At(999)).has_value());

  std::optional<ReplicaPick> first = replicas.picker().TakeProbe(At(1000));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->replica, 1u);
  EXPECT_TRUE(first->ticket.probe);
  EXPECT_EQ(replicas.state(1, At(1000)), CircuitState::kHalfOpen);
  // Replica 1's probe is out; replica 2's is due at 1.5 s.
  EXPECT_EQ(replicas.picker().NextProbeDue(At(1000)), At(1500));
  EXPECT_FALSE(replicas.picker().TakeProbe(At(1499)).has_value());
  std::optional<ReplicaPick> second = replicas.picker().TakeProbe(At(1500));
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->replica, 2u);
  EXPECT_EQ(replicas.picker().NextProbeDue(At(1500)), absl::InfiniteFuture());

  // A cancelled probe is wanted again at once.
  replicas.picker().OnCancel(2, second->ticket);
  EXPECT_EQ(replicas.picker().NextProbeDue(At(1600)), At(1600));
  replicas.picker().OnSuccess(1, first->ticket, At(1600));
  EXPECT_EQ(replicas.state(1, At(1600)), CircuitState::kClosed);
  // A retired replica is not probed.
  replicas.picker().Retire(2);
  EXPECT_EQ(replicas.picker().NextProbeDue(At(1600)), absl::InfiniteFuture());
  EXPECT_FALSE(replicas.picker().TakeProbe(At(1600)).has_value());
}

TEST(ReplicaPickerTest, CancelIsNeutral) {
  Replicas replicas(2);
  replicas.Fail(0, 2, At(0));
  for (int i = 0; i < 10; ++i) {
    std::optional<ReplicaPick> pick = replicas.picker().PickPrimary(At(0));
    ASSERT_TRUE(pick.has_value());
    replicas.picker().OnCancel(pick->replica, pick->ticket);
  }
  const CircuitSnapshot snapshot = replicas.breaker(0).Snapshot(At(0));
  EXPECT_EQ(snapshot.consecutive_failures, 2);
  EXPECT_EQ(snapshot.window_outcomes, 2);
  EXPECT_EQ(snapshot.generation, 0u);
}

// Sequential reads, one every 5 ms, on two replicas: replica 0 refuses at
// once (an overload answer, 429 or 503, in 0.2 ms), replica 1 answers in
// 3 ms. Each read's primary ends as the transport ends it, with
// `refusal` for replica 0's. No ejection (share 0): the load alone
// decides. Returns the primaries each replica got.
std::vector<int> FastRefusalShares(ReplicaLoad::Ending refusal, int reads) {
  Replicas replicas(2, /*max_ejected_share=*/0);
  std::vector<int> counts(2);
  for (int i = 0; i < reads; ++i) {
    const absl::Time now = At(i * 5);
    std::optional<ReplicaPick> pick = replicas.picker().PickPrimary(now);
    if (!pick.has_value()) {
      ADD_FAILURE() << "no primary at read " << i;
      break;
    }
    ++counts[pick->replica];
    ReplicaLoad& load = replicas.load(pick->replica);
    load.Begin(now);
    if (pick->replica == 0) {
      const absl::Time end = now + absl::Microseconds(200);
      load.End(now, end, refusal);
      if (refusal == ReplicaLoad::Ending::kFailed) {
        replicas.picker().OnFailure(0, pick->ticket, end);
      } else {
        replicas.picker().OnSuccess(0, pick->ticket, end);
      }
    } else {
      const absl::Time end = now + absl::Milliseconds(3);
      load.End(now, end, ReplicaLoad::Ending::kAnswered);
      replicas.picker().OnSuccess(1, pick->ticket, end);
    }
  }
  return counts;
}

TEST(ReplicaPickerTest, FastOverloadAnswersNeverAttractPrimaries) {
  constexpr int kReads = 2000;  // 10 s of simulated time
  // Counted as failures (as the transport counts 429 and 503): the
  // refusing replica is expensive, tried again only as its estimate
  // decays (every few hundred ms), and gets a few percent of the reads.
  const std::vector<int> failed =
      FastRefusalShares(ReplicaLoad::Ending::kFailed, kReads);
  EXPECT_LT(failed[0], failed[1]);
  EXPECT_LE(failed[0], kReads / 20) << failed[0];
  // Counted as answers, the same refusals would look cheap and draw the
  // reads: what counting them as failures prevents.
  const std::vector<int> answered =
      FastRefusalShares(ReplicaLoad::Ending::kAnswered, kReads);
  EXPECT_GT(answered[0], answered[1]);
}

TEST(ReplicaPickerTest, BackedOffReplicaTakesNoAttemptUntilItsTime) {
  Replicas replicas(3);
  // Replica 1 is the cheapest, and would be every read's alternate.
  replicas.SetLatency(0, absl::Milliseconds(10), At(0));
  replicas.SetLatency(1, absl::Milliseconds(1), At(0));
  replicas.SetLatency(2, absl::Milliseconds(12), At(0));
  replicas.picker().BackOff(1, At(5000));
  EXPECT_TRUE(replicas.picker().BackedOff(1, At(0)));
  const std::vector<int> counts = PrimaryCounts(replicas, 3, 300, At(10));
  EXPECT_EQ(counts[1], 0);
  EXPECT_EQ(counts[0] + counts[2], 300);
  EXPECT_EQ(replicas.picker().PickAlternate(0, At(10))->replica, 2u);
  EXPECT_EQ(replicas.picker().PickAlternate(2, At(10))->replica, 0u);
  // An earlier time does not shorten it; at its time it is back.
  replicas.picker().BackOff(1, At(1000));
  EXPECT_TRUE(replicas.picker().BackedOff(1, At(4999)));
  EXPECT_FALSE(replicas.picker().BackedOff(1, At(5000)));
  EXPECT_GT(PrimaryCounts(replicas, 3, 300, At(5000))[1], 0);
  EXPECT_EQ(replicas.picker().PickAlternate(0, At(5000))->replica, 1u);
}

TEST(ReplicaPickerTest, TheLastReplicaNotBackedOffTakesEveryReadAlone) {
  Replicas replicas(2);
  replicas.picker().BackOff(1, At(5000));
  EXPECT_EQ(PrimaryCounts(replicas, 2, 100, At(0)), (std::vector<int>{100, 0}));
  // No hedge nor fallback to the backed-off replica.
  EXPECT_FALSE(replicas.picker().HasAlternate(0, At(0)));
  EXPECT_FALSE(replicas.picker().PickAlternate(0, At(0)).has_value());
}

TEST(ReplicaPickerTest, EveryReplicaBackedOffStillTakesOneAttemptPerRead) {
  Replicas replicas(2);
  replicas.picker().BackOff(0, At(5000));
  replicas.picker().BackOff(1, At(3000));
  // Reads go out in rotation as if none were backed off...
  EXPECT_EQ(PrimaryCounts(replicas, 2, 100, At(0)), (std::vector<int>{50, 50}));
  // ...one attempt each: no hedge, no fallback.
  for (size_t replica : {0u, 1u}) {
    EXPECT_FALSE(replicas.picker().HasAlternate(replica, At(0)));
    EXPECT_FALSE(replicas.picker().PickAlternate(replica, At(0)).has_value());
  }
  // The first one back takes the reads alone, until the other is back.
  EXPECT_EQ(PrimaryCounts(replicas, 2, 100, At(3000)),
            (std::vector<int>{0, 100}));
  EXPECT_EQ(PrimaryCounts(replicas, 2, 100, At(5000)),
            (std::vector<int>{50, 50}));
}

TEST(ReplicaPickerTest, BackOffNeverBringsBackAnEjectedReplica) {
  Replicas replicas(2);
  replicas.Eject(0, At(0));
  replicas.picker().BackOff(1, At(5000));
  // The only serving replica is backed off: it still takes the reads.
  EXPECT_EQ(PrimaryCounts(replicas, 2, 10, At(0)), (std::vector<int>{0, 10}));
}

TEST(ReplicaPickerTest, BackOffSaysWhetherItBeganAndWhenItEnds) {
  Replicas replicas(2);
  ReplicaPicker& picker = replicas.picker();
  EXPECT_EQ(picker.BackedOffUntil(1), absl::InfinitePast());
  // Never backed off before: it begins.
  EXPECT_EQ(picker.BackOff(1, At(5000)), absl::InfinitePast());
  EXPECT_EQ(picker.BackedOffUntil(1), At(5000));
  // At 1 s, a longer wait extends it (the end before: 5 s, still ahead).
  EXPECT_EQ(picker.BackOff(1, At(8000)), At(5000));
  EXPECT_EQ(picker.BackedOffUntil(1), At(8000));
  // A shorter one changes nothing.
  EXPECT_EQ(picker.BackOff(1, At(6000)), At(8000));
  EXPECT_EQ(picker.BackedOffUntil(1), At(8000));
  EXPECT_TRUE(picker.BackedOff(1, At(7999)));
  EXPECT_FALSE(picker.BackedOff(1, At(8000)));
  // Once over, the end stays readable; a new one begins after it.
  EXPECT_EQ(picker.BackOff(1, At(12000)), At(8000));
  EXPECT_EQ(picker.BackedOffUntil(0), absl::InfinitePast());
}

}  // namespace
}  // namespace tailgate::hedge
