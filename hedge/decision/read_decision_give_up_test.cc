// ReadDecision with a give-up point: a primary still alone at give_up_after
// gets a fallback on the retry budget and races it (losing to it is a
// failure of its replica); with no fallback to be had it goes on. A loser that
// ran past the give-up point lost by hanging and is blamed; the caller's cancel
// never blames. A read with hedging disabled has no give-up point, and no
// read's comes before its hedge delay or before its hedge was asked for.
// A key that loses so again on the same replica within a window is
// neutral while that replica answers other reads.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "hedge/decision/read_decision.h"
#include "hedge/decision/testing_actions.h"
#include "hedge/decision/testing_replicas.h"

namespace tailgate::hedge {
namespace {

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);
absl::Time At(int ms) { return kT0 + absl::Milliseconds(ms); }

constexpr absl::Duration kDelay = absl::Milliseconds(25);
constexpr absl::Duration kGiveUp = absl::Milliseconds(100);

std::string Describe(const Actions& actions) {
  return DescribeActions(actions, kT0);
}

class ReadDecisionGiveUpTest : public ::testing::Test {
 protected:
  // The retry budget earns a whole credit per admission and has no floor:
  // it holds the `retry_credits` deposited here. The hedge budget holds
  // `hedge_burst` credits.
  void Configure(int retry_credits = 100, double hedge_burst = 0,
                 size_t replicas = 2) {
    replicas_ = std::make_unique<TestReplicas>(replicas);
    budget_ =
        std::make_unique<HedgeBudget>(HedgeBudgetConfig{0.5, hedge_burst});
    retry_budget_ = std::make_unique<RetryBudget>(
        RetryBudgetConfig{1, 0, absl::Seconds(10)});
    for (int i = 0; i < retry_credits; ++i) retry_budget_->OnAdmission(kT0);
  }

  void SetUp() override { Configure(); }
  void TearDown() override {
    for (const auto& read : reads_) EXPECT_TRUE(read->finished());
    EXPECT_EQ(limits_.attempts().in_use(), 0);
  }

  // Hedge delay kDelay, give-up point kGiveUp.
  static ReadOptions Options() {
    ReadOptions options;
    options.hedge_delay = kDelay;
    options.give_up_after = kGiveUp;
    return options;
  }

  ReadDecision& NewRead(const ReadOptions& options = Options()) {
    reads_.push_back(std::make_unique<ReadDecision>(
        ReadPolicy{replicas_->picker(), budget_.get(), retry_budget_.get(),
                   &limits_},
        options));
    return *reads_.back();
  }

  CircuitSnapshot replica(size_t index, absl::Time now) {
    return replicas_->breaker(index).Snapshot(now);
  }

  std::unique_ptr<TestReplicas> replicas_;
  std::unique_ptr<HedgeBudget> budget_;
  std::unique_ptr<RetryBudget> retry_budget_;
  AdmissionLimits limits_{AdmissionConfig{100, 100}};
  std::vector<std::unique_ptr<ReadDecision>> reads_;
};

TEST_F(ReadDecisionGiveUpTest, StartArmsTheGiveUpTimer) {
  ReadDecision& read = NewRead();
  EXPECT_EQ(Describe(read.Start(At(0))),
            "launch a0 r0 primary, arm +25ms, give-up +100ms");
  read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(5));
  // A timer that fires after the read finished does nothing.
  EXPECT_EQ(Describe(read.OnGiveUp(At(100))), "");
}

TEST_F(ReadDecisionGiveUpTest, GiveUpLaunchesAFallbackThatRacesThePrimary) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  ASSERT_EQ(Describe(read.OnHedgeTimer(At(25))), "skip no_budget");
  EXPECT_EQ(Describe(read.OnGiveUp(At(100))),
            "launch a1 r1 fallback, gave-up a0");
  EXPECT_EQ(read.kind(1), AttemptKind::kFallback);
  EXPECT_EQ(retry_budget_->consumed(), 1u);
  EXPECT_EQ(limits_.attempts().in_use(), 2);  // the primary is not cut
  // Nothing is on record yet: the race decides.
  EXPECT_EQ(replica(0, At(100)).window_outcomes, 0);
  EXPECT_FALSE(read.finished());
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(125))), "");
  EXPECT_EQ(Describe(read.OnGiveUp(At(200))), "");
  // The fallback wins: the primary lost its race past the give-up point,
  // a failure of its replica.
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(130))),
            "fail a0, finish a1");
  const CircuitSnapshot primary = replica(0, At(130));
  EXPECT_EQ(primary.consecutive_failures, 1);
  EXPECT_EQ(primary.window_failures, 1);
  EXPECT_EQ(replica(1, At(130)).window_outcomes, 1);
  EXPECT_EQ(replica(1, At(130)).window_failures, 0);
}

TEST_F(ReadDecisionGiveUpTest, APrimaryGivenUpOnMayStillAnswer) {
  // The fallback fails (its replica just went down): the slow primary,
  // still in flight, answers the read.
  ReadDecision& read = NewRead();
  read.Start(At(0));
  ASSERT_EQ(Describe(read.OnHedgeTimer(At(25))), "skip no_budget");
  read.OnGiveUp(At(100));
  EXPECT_EQ(
      Describe(read.OnAttemptDone(1, AttemptOutcome::kTransportError, At(101))),
      "");
  EXPECT_EQ(Describe(read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(140))),
            "finish a0");
  EXPECT_EQ(replica(0, At(140)).window_failures, 0);
  EXPECT_EQ(replica(1, At(140)).window_failures, 1);
  // Both fail: the read fails as any read whose attempts all failed.
  ReadDecision& other = NewRead();
  other.Start(At(200));
  other.OnHedgeTimer(At(225));
  other.OnGiveUp(At(300));
  other.OnAttemptDone(1, AttemptOutcome::kTransportError, At(310));
  EXPECT_EQ(Describe(other.OnAttemptDone(0, AttemptOutcome::kTransportError,
                                         At(320))),
            "finish upstream_failure");
}

TEST_F(ReadDecisionGiveUpTest, WithoutRetryCreditThePrimaryGoesOn) {
  Configure(/*retry_credits=*/0);
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  EXPECT_EQ(Describe(read.OnGiveUp(At(100))), "skip no_retry_budget");
  EXPECT_FALSE(read.finished());
  EXPECT_EQ(read.attempts_launched(), 1);
  EXPECT_EQ(limits_.attempts().in_use(), 1);
  EXPECT_EQ(replica(0, At(100)).window_outcomes, 0);  // nothing blamed
  EXPECT_EQ(Describe(read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(150))),
            "finish a0");
  EXPECT_EQ(replica(0, At(150)).window_failures, 0);
}

TEST_F(ReadDecisionGiveUpTest, PrimaryFailingAfterASkippedGiveUpFallsBack) {
  Configure(/*retry_credits=*/0);
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  ASSERT_EQ(Describe(read.OnGiveUp(At(100))), "skip no_retry_budget");
  retry_budget_->OnAdmission(At(120));  // a credit comes back
  EXPECT_EQ(
      Describe(read.OnAttemptDone(0, AttemptOutcome::kServerError, At(150))),
      "launch a1 r1 fallback");
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(160))),
            "finish a1");
}

TEST_F(ReadDecisionGiveUpTest, WithoutAnotherReplicaThePrimaryGoesOn) {
  Configure(100, 0, /*replicas=*/1);
  ReadDecision& read = NewRead();
  read.Start(At(0));
  ASSERT_EQ(Describe(read.OnHedgeTimer(At(25))), "skip no_replica");
  EXPECT_EQ(Describe(read.OnGiveUp(At(100))), "skip no_replica");
  EXPECT_EQ(retry_budget_->consumed(), 0u);
  EXPECT_EQ(Describe(read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(300))),
            "finish a0");
  EXPECT_EQ(replica(0, At(300)).window_failures, 0);
}

TEST_F(ReadDecisionGiveUpTest, HedgeInFlightIsLeftToRace) {
  Configure(100, /*hedge_burst=*/10);
  ReadDecision& read = NewRead();
  read.Start(At(0));
  ASSERT_EQ(Describe(read.OnHedgeTimer(At(25))), "launch a1 r1 hedge");
  EXPECT_EQ(Describe(read.OnGiveUp(At(100))), "");
  EXPECT_EQ(limits_.attempts().in_use(), 2);
  EXPECT_EQ(retry_budget_->consumed(), 0u);
  EXPECT_EQ(replica(0, At(100)).window_outcomes, 0);
  read.OnCancel(At(110));
}

TEST_F(ReadDecisionGiveUpTest, FallbackInFlightIsNotReplacedAgain) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  ASSERT_EQ(
      Describe(read.OnAttemptDone(0, AttemptOutcome::kServerError, At(10))),
      "launch a1 r1 fallback");
  EXPECT_EQ(Describe(read.OnGiveUp(At(100))), "");
  EXPECT_EQ(retry_budget_->consumed(), 1u);
  read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(150));
}

TEST_F(ReadDecisionGiveUpTest, HedgeBeatingAPrimaryPastGiveUpBlamesIt) {
  Configure(100, /*hedge_burst=*/10);
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  read.OnGiveUp(At(100));
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(130))),
            "fail a0, finish a1");
  EXPECT_EQ(replica(0, At(130)).consecutive_failures, 1);
  EXPECT_EQ(replica(1, At(130)).window_failures, 0);
}

// Reads of `key` whose primary hangs past the give-up point and loses to
// the fallback; returns how the loser was reported ("fail a0" or
// "cancel a0") and the primary's replica.
std::pair<std::string, size_t> LoseToFallback(ReadDecision& read, int at_ms) {
  read.Start(At(at_ms));
  read.OnHedgeTimer(At(at_ms + 25));
  const std::string gave_up = Describe(read.OnGiveUp(At(at_ms + 100)));
  if (gave_up != "launch a1 r" + std::to_string(1 - read.replica(0)) +
                     " fallback, gave-up a0") {
    return {"no fallback: " + gave_up, read.replica(0)};
  }
  const std::string done = Describe(
      read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(at_ms + 130)));
  return {done.substr(0, done.find(',')), read.replica(0)};
}

TEST_F(ReadDecisionGiveUpTest, AKeyLosingAgainOnItsReplicaCountsOnce) {
  ReadOptions hot = Options();
  hot.key = 7;
  ReadOptions other = Options();
  other.key = 8;
  // The primaries take the replicas in turn: r0, r1, r0, r1, r0.
  EXPECT_EQ(LoseToFallback(NewRead(hot), 0),
            std::make_pair(std::string("fail a0"), size_t{0}));
  EXPECT_EQ(LoseToFallback(NewRead(hot), 1000),
            std::make_pair(std::string("fail a0"), size_t{1}));
  // Key 7 on r0 again within the window: neutral, nothing on record.
  EXPECT_EQ(LoseToFallback(NewRead(hot), 2000),
            std::make_pair(std::string("cancel a0"), size_t{0}));
  EXPECT_EQ(replica(0, At(2200)).window_failures, 1);
  // Another key hanging on r0 is news: a replica that hangs on whatever
  // it is asked is blamed for each.
  LoseToFallback(NewRead(other), 3000);  // r1
  EXPECT_EQ(LoseToFallback(NewRead(other), 4000),
            std::make_pair(std::string("fail a0"), size_t{0}));
  EXPECT_EQ(replica(0, At(4200)).window_failures, 2);
  // Once the window is over, key 7 counts again.
  LoseToFallback(NewRead(hot), 5000);  // r1
  for (int i = 0; i < 10; ++i) retry_budget_->OnAdmission(At(15000));
  EXPECT_EQ(LoseToFallback(NewRead(hot), 6000 + 10000),
            std::make_pair(std::string("fail a0"), size_t{0}));
}

TEST_F(ReadDecisionGiveUpTest, AKeyLosingAgainOnAReplicaAnsweringNothingCounts) {
  ReadOptions hot = Options();
  hot.key = 7;
  EXPECT_EQ(LoseToFallback(NewRead(hot), 0),
            std::make_pair(std::string("fail a0"), size_t{0}));
  // r1's own read answers at once: r0 gets no answer in between.
  ReadDecision& on_r1 = NewRead(hot);
  on_r1.Start(At(1000));
  ASSERT_EQ(on_r1.replica(0), 1u);
  on_r1.OnAttemptDone(0, AttemptOutcome::kSuccess, At(1005));
  // r0 hangs on key 7 again: it answers nothing, so it counts.
  EXPECT_EQ(LoseToFallback(NewRead(hot), 2000),
            std::make_pair(std::string("fail a0"), size_t{0}));
  EXPECT_EQ(replica(0, At(2200)).window_failures, 2);
  EXPECT_EQ(replica(0, At(2200)).consecutive_failures, 2);
}

TEST_F(ReadDecisionGiveUpTest, HedgeBeatingAPrimaryBeforeGiveUpBlamesNothing) {
  Configure(100, /*hedge_burst=*/10);
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(99))),
            "cancel a0, finish a1");
  EXPECT_EQ(replica(0, At(99)).window_outcomes, 0);
  // At the give-up point exactly it has had its chance.
  ReadDecision& at_point = NewRead();
  at_point.Start(At(200));
  at_point.OnHedgeTimer(At(225));
  EXPECT_EQ(
      Describe(at_point.OnAttemptDone(1, AttemptOutcome::kSuccess, At(300))),
      "fail a0, finish a1");
}

TEST_F(ReadDecisionGiveUpTest, PrimaryBeatingALateHedgeBlamesOnlyByAge) {
  Configure(100, /*hedge_burst=*/10);
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  // The primary wins at 120 ms: the hedge had run 95 ms, short of the
  // give-up point.
  EXPECT_EQ(Describe(read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(120))),
            "cancel a1, finish a0");
  EXPECT_EQ(replica(1, At(120)).window_outcomes, 0);
}

TEST_F(ReadDecisionGiveUpTest, CallerCancelAndDeadlineNeverBlame) {
  Configure(100, /*hedge_burst=*/10);
  ReadDecision& cancelled = NewRead();
  cancelled.Start(At(0));
  cancelled.OnHedgeTimer(At(25));
  cancelled.OnGiveUp(At(100));
  EXPECT_EQ(Describe(cancelled.OnCancel(At(500))),
            "cancel a0, cancel a1, finish cancelled");

  ReadDecision& deadline = NewRead();
  deadline.Start(At(1000));
  deadline.OnHedgeTimer(At(1025));
  deadline.OnGiveUp(At(1100));
  EXPECT_EQ(Describe(deadline.OnDeadline(At(1500), DeadlineSource::kCaller)),
            "cancel a0, cancel a1, finish deadline_exceeded");
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(replica(i, At(1500)).window_outcomes, 0) << i;
  }
}

TEST_F(ReadDecisionGiveUpTest, HedgeDisabledReadsNeverGiveUp) {
  ReadOptions options = Options();
  options.hedge_disabled = true;
  ReadDecision& read = NewRead(options);
  EXPECT_EQ(Describe(read.Start(At(0))), "launch a0 r0 primary");
  // Even a give-up timer fired by mistake launches nothing.
  EXPECT_EQ(Describe(read.OnGiveUp(At(100))), "");
  EXPECT_EQ(Describe(read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(150))),
            "finish a0");
  EXPECT_EQ(read.attempts_launched(), 1);
  EXPECT_EQ(retry_budget_->consumed(), 0u);
  EXPECT_EQ(replica(0, At(150)).window_outcomes, 1);
  EXPECT_EQ(replica(0, At(150)).window_failures, 0);
}

TEST_F(ReadDecisionGiveUpTest, HedgeDisabledReadsStillFallBackOnFailure) {
  ReadOptions options = Options();
  options.hedge_disabled = true;
  ReadDecision& read = NewRead(options);
  read.Start(At(0));
  EXPECT_EQ(
      Describe(read.OnAttemptDone(0, AttemptOutcome::kServerError, At(150))),
      "launch a1 r1 fallback");
  EXPECT_EQ(retry_budget_->consumed(), 1u);
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(160))),
            "finish a1");
}

// The give-up point learned from fast answers (20 ms) is below the read's
// hedge delay (50 ms): the read's point is its hedge delay.
ReadOptions GiveUpBeforeTheHedgeDelay() {
  ReadOptions options;
  options.hedge_delay = absl::Milliseconds(50);
  options.give_up_after = absl::Milliseconds(20);
  return options;
}

TEST_F(ReadDecisionGiveUpTest, GiveUpPointIsNeverBeforeTheHedgeDelay) {
  ReadDecision& read = NewRead(GiveUpBeforeTheHedgeDelay());
  EXPECT_EQ(Describe(read.Start(At(0))),
            "launch a0 r0 primary, arm +50ms, give-up +50ms");
  // Answered at 30 ms, before the hedge delay: no extra attempt at all.
  EXPECT_EQ(Describe(read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(30))),
            "finish a0");
  EXPECT_EQ(read.attempts_launched(), 1);
  EXPECT_EQ(retry_budget_->consumed(), 0u);
  EXPECT_EQ(budget_->extra(), 0u);
}

TEST_F(ReadDecisionGiveUpTest, GiveUpDueWithTheHedgeLeavesItToTheHedge) {
  Configure(100, /*hedge_burst=*/10);
  ReadDecision& read = NewRead(GiveUpBeforeTheHedgeDelay());
  read.Start(At(0));
  // Both timers are due at 50 ms; the give-up's fires first.
  EXPECT_EQ(Describe(read.OnGiveUp(At(50))), "");
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(50))), "launch a1 r1 hedge");
  EXPECT_EQ(budget_->extra(), 1u);
  EXPECT_EQ(retry_budget_->consumed(), 0u);
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(60))),
            "fail a0, finish a1");
}

TEST_F(ReadDecisionGiveUpTest, GiveUpFollowsASkippedHedge) {
  ReadDecision& read = NewRead(GiveUpBeforeTheHedgeDelay());
  read.Start(At(0));
  EXPECT_EQ(Describe(read.OnGiveUp(At(50))), "");
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(50))),
            "skip no_budget, launch a1 r1 fallback, gave-up a0");
  EXPECT_EQ(retry_budget_->consumed(), 1u);
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(60))),
            "fail a0, finish a1");
}

TEST_F(ReadDecisionGiveUpTest, GiveUpWaitsForALateHedge) {
  ReadOptions options = Options();
  options.late_hedge_delay = absl::Milliseconds(50);
  options.hedge_reserve = 5;  // the budget holds none
  options.give_up_after = absl::Milliseconds(30);
  ReadDecision& read = NewRead(options);
  EXPECT_EQ(Describe(read.Start(At(0))),
            "launch a0 r0 primary, arm +25ms, give-up +30ms");
  ASSERT_EQ(Describe(read.OnHedgeTimer(At(25))), "arm +50ms");
  EXPECT_EQ(Describe(read.OnGiveUp(At(30))), "");
  EXPECT_EQ(retry_budget_->consumed(), 0u);
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(50))),
            "skip no_budget, launch a1 r1 fallback, gave-up a0");
  read.OnCancel(At(60));
}

TEST_F(ReadDecisionGiveUpTest, LosersAreBlamedByTheReadsGiveUpPoint) {
  Configure(100, /*hedge_burst=*/10);
  ReadDecision& read = NewRead(GiveUpBeforeTheHedgeDelay());
  read.Start(At(0));
  read.OnHedgeTimer(At(50));
  // The hedge had run 40 ms: past the 20 ms it was given, short of the
  // read's give-up point.
  EXPECT_EQ(Describe(read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(90))),
            "cancel a1, finish a0");
  EXPECT_EQ(replica(1, At(90)).window_outcomes, 0);
}

TEST_F(ReadDecisionGiveUpTest, NoGiveUpPointNoTimer) {
  ReadOptions options;
  options.hedge_delay = kDelay;
  ReadDecision read(ReadPolicy{replicas_->picker(), budget_.get(),
                               retry_budget_.get(), &limits_},
                    options);
  EXPECT_EQ(Describe(read.Start(At(0))), "launch a0 r0 primary, arm +25ms");
  read.OnHedgeTimer(At(25));
  EXPECT_EQ(Describe(read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(900))),
            "finish a0");
  EXPECT_EQ(replica(0, At(900)).window_failures, 0);
}

}  // namespace
}  // namespace tailgate::hedge
