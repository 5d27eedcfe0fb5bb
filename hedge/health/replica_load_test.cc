#include "hedge/health/replica_load.h"

#include <cmath>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

using Ending = ReplicaLoad::Ending;

absl::Time At(int ms) { return absl::UnixEpoch() + absl::Milliseconds(ms); }

// One attempt started at `start_ms` that ended `ending` at `end_ms`.
void Attempt(ReplicaLoad& load, int start_ms, int end_ms,
             Ending ending = Ending::kAnswered) {
  load.Begin(At(start_ms));
  load.End(At(start_ms), At(end_ms), ending);
}

// Answers of `latency_ms` every `every_ms` from `from_ms` until `to_ms`.
void Answers(ReplicaLoad& load, int latency_ms, int every_ms, int from_ms,
             int to_ms) {
  for (int t = from_ms; t + latency_ms <= to_ms; t += every_ms) {
    Attempt(load, t, t + latency_ms);
  }
}

TEST(ReplicaLoadTest, UnknownReplicaCostsTheFloor) {
  ReplicaLoad load;
  const ReplicaLoadSnapshot snapshot = load.Snapshot(At(0));
  EXPECT_EQ(snapshot.latency, absl::ZeroDuration());
  EXPECT_EQ(snapshot.in_flight, 0);
  EXPECT_DOUBLE_EQ(load.Cost(At(0)),
                   absl::ToDoubleSeconds(ReplicaLoad::kLatencyFloor));
}

TEST(ReplicaLoadTest, FirstAnswerSetsTheEstimate) {
  ReplicaLoad load;
  Attempt(load, 0, 30);
  EXPECT_NEAR(absl::ToDoubleMilliseconds(load.Snapshot(At(30)).latency), 30,
              1e-6);
  EXPECT_NEAR(load.Cost(At(30)), 0.030, 1e-12);
}

TEST(ReplicaLoadTest, SlowReplicaCostsMoreThanAFastOne) {
  ReplicaLoad fast;
  ReplicaLoad slow;
  Answers(fast, 5, 10, 0, 2000);
  Answers(slow, 50, 10, 0, 2000);
  EXPECT_NEAR(absl::ToDoubleMilliseconds(fast.Snapshot(At(2000)).latency), 5,
              0.5);
  EXPECT_NEAR(absl::ToDoubleMilliseconds(slow.Snapshot(At(2000)).latency), 50,
              5);
  EXPECT_GT(slow.Cost(At(2000)), 5 * fast.Cost(At(2000)));
}

TEST(ReplicaLoadTest, AttemptsInFlightMultiplyTheCost) {
  ReplicaLoad load;
  Attempt(load, 0, 10);
  const double idle = load.Cost(At(10));
  for (int i = 0; i < 3; ++i) load.Begin(At(10));
  EXPECT_EQ(load.Snapshot(At(10)).in_flight, 3);
  EXPECT_DOUBLE_EQ(load.Cost(At(10)), 4 * idle);
  // Each End takes one off.
  load.End(At(10), At(10), Ending::kNoSample);
  EXPECT_DOUBLE_EQ(load.Cost(At(10)), 3 * idle);
}

TEST(ReplicaLoadTest, MeanAgeOfAttemptsInFlightBoundsTheLatencyFromBelow) {
  ReplicaLoad load;
  Answers(load, 2, 10, 0, 1000);  // ~2 ms
  const absl::Time now = At(1000);
  ASSERT_LT(load.Snapshot(now).latency, absl::Milliseconds(3));
  // Two attempts in flight, 100 ms and 300 ms old: a mean age of 200 ms.
  load.Begin(now - absl::Milliseconds(300));
  load.Begin(now - absl::Milliseconds(100));
  EXPECT_NEAR(load.Cost(now), 0.200 * 3, 1e-9);
}

TEST(ReplicaLoadTest, HungAttemptMakesItsReplicaExpensiveBeforeItEnds) {
  ReplicaLoad hung;
  ReplicaLoad healthy;
  Answers(hung, 5, 10, 0, 1000);
  Answers(healthy, 5, 10, 0, 1000);
  hung.Begin(At(1000));  // never answers
  // Within its first hundred milliseconds it is about as cheap as any
  // other replica with one attempt out...
  EXPECT_LT(hung.Cost(At(1005)), 3 * healthy.Cost(At(1005)));
  // ...and then the age of the hung attempt takes over.
  EXPECT_NEAR(hung.Cost(At(1500)), 0.5 * 2, 1e-9);
  EXPECT_NEAR(hung.Cost(At(3000)), 2.0 * 2, 1e-9);
  EXPECT_GT(hung.Cost(At(3000)), 100 * healthy.Cost(At(3000)));
}

TEST(ReplicaLoadTest, CutShortAttemptCountsHowLongItRan) {
  ReplicaLoad load;
  Attempt(load, 0, 5);
  // Lost its race after 2 s (no answer): as if it had taken 2 s.
  Attempt(load, 1000, 3000, Ending::kCutShort);
  EXPECT_GT(load.Snapshot(At(3000)).latency, absl::Seconds(1));
}

TEST(ReplicaLoadTest, FailureNeverLowersTheEstimate) {
  ReplicaLoad load;
  ReplicaLoad twin;  // the same answers, no failure
  Answers(load, 100, 20, 0, 2000);
  Answers(twin, 100, 20, 0, 2000);
  ASSERT_GT(load.Snapshot(At(2000)).latency, absl::Milliseconds(90));
  // Quick refusals: a refusal is quick, not cheap.
  for (int i = 0; i < 50; ++i) Attempt(load, 2000, 2001, Ending::kFailed);
  EXPECT_EQ(load.Snapshot(At(2001)).latency, twin.Snapshot(At(2001)).latency);
  // A failure slower than the estimate raises it to how long it ran.
  Attempt(load, 2001, 2501, Ending::kFailed);
  EXPECT_EQ(load.Snapshot(At(2501)).latency, absl::Milliseconds(500));
}

TEST(ReplicaLoadTest, CallersEndingsLeaveNoSample) {
  ReplicaLoad load;
  Attempt(load, 0, 10);
  Attempt(load, 10, 5000, Ending::kNoSample);
  const ReplicaLoadSnapshot snapshot = load.Snapshot(At(10));
  EXPECT_NEAR(absl::ToDoubleMilliseconds(snapshot.latency), 10, 1e-6);
  EXPECT_EQ(snapshot.in_flight, 0);
}

TEST(ReplicaLoadTest, ConstantAnswersGiveTheirLatencyAtAnyRate) {
  for (int every_ms : {1, 10, 100, 500}) {
    ReplicaLoad load;
    Answers(load, 20, every_ms, 0, 20000);
    const int last_ms = (20000 - 20) / every_ms * every_ms + 20;
    EXPECT_NEAR(absl::ToDoubleMilliseconds(load.Snapshot(At(last_ms)).latency),
                20, 0.01)
        << "every " << every_ms << " ms";
  }
}

TEST(ReplicaLoadTest, EstimateDecaysTowardZeroWithoutSamples) {
  ReplicaLoad load;
  Attempt(load, 0, 100);
  const absl::Duration idle = ReplicaLoad::kIdleDecay;
  EXPECT_NEAR(absl::ToDoubleMilliseconds(load.Snapshot(At(100) + idle).latency),
              100 * std::exp(-1.0), 1e-6);
  EXPECT_NEAR(
      absl::ToDoubleMilliseconds(load.Snapshot(At(100) + 3 * idle).latency),
      100 * std::exp(-3.0), 1e-6);
  // Down to the floor in the end.
  EXPECT_DOUBLE_EQ(load.Cost(At(100) + 100 * idle),
                   absl::ToDoubleSeconds(ReplicaLoad::kLatencyFloor));
}

TEST(ReplicaLoadTest, AvoidedSlowReplicaBecomesAttractiveAgain) {
  // The slow replica answered in 100 ms until t = 1 s, then was avoided;
  // the fast one goes on answering in 5 ms.
  ReplicaLoad slow;
  ReplicaLoad fast;
  Answers(slow, 100, 10, 0, 1000);
  int fast_until = 0;
  // As ReplicaPicker weighs them: within kTolerance counts as equal.
  const auto attractive_at = [&](int ms) {
    Answers(fast, 5, 10, fast_until, ms);
    fast_until = ms;
    return slow.Cost(At(ms)) <= fast.Cost(At(ms)) * 1.5;
  };
  const int idle_ms = absl::ToInt64Milliseconds(ReplicaLoad::kIdleDecay);
  EXPECT_FALSE(attractive_at(1000));
  EXPECT_FALSE(attractive_at(1000 + idle_ms));
  const int later_ms = 1000 + 5 * idle_ms;
  EXPECT_TRUE(attractive_at(later_ms));
  // What it answers then counts: still slow, it is avoided again.
  Attempt(slow, later_ms, later_ms + 100);
  EXPECT_FALSE(attractive_at(later_ms + 100));
}

TEST(ReplicaLoadTest, OneStragglerAmongManyFastAnswersMovesTheEstimateLittle) {
  ReplicaLoad load;
  Answers(load, 5, 2, 0, 2000);  // 500 answers a second
  Attempt(load, 0, 2000);        // one of 2 s
  const absl::Duration after = load.Snapshot(At(2000)).latency;
  EXPECT_LT(after, absl::Milliseconds(15));
  // And the next answers bring it back.
  Answers(load, 5, 2, 2000, 4000);
  EXPECT_NEAR(absl::ToDoubleMilliseconds(load.Snapshot(At(4000)).latency), 5,
              0.5);
}

}  // namespace
}  // namespace tailgate::hedge
