#include "hedge/decision/read_decision.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "hedge/decision/testing_actions.h"
#include "hedge/health/replica_load.h"

namespace tailgate::hedge {
namespace {

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);
absl::Time At(int ms) { return kT0 + absl::Milliseconds(ms); }

constexpr absl::Duration kDelay = absl::Milliseconds(25);

std::string Describe(const Actions& actions) {
  return DescribeActions(actions, kT0);
}

// The shared policy objects, plus the reads a test creates. Every test ends
// with every read finished and every attempt permit given back, checked
// while the reads still exist (their destructors would release permits and
// hide a leak).
class ReadDecisionTest : public ::testing::Test {
 protected:
  // Replaces the policy objects (and the reads, after checking them).
  // The default budgets are roomy (burst 10; 100 retries): a test about a
  // budget sets its own.
  void Configure(size_t replicas, HedgeBudgetConfig budget = {0.5, 10},
                 AdmissionConfig admission = {100, 100},
                 RetryBudgetConfig retry = {0.5, 10, absl::Seconds(10)}) {
    ExpectAllReadsDone();
    reads_.clear();
    picker_.reset();
    breakers_.clear();
    loads_.clear();
    std::vector<CircuitBreaker*> breakers;
    std::vector<ReplicaLoad*> loads;
    for (size_t i = 0; i < replicas; ++i) {
      breakers_.push_back(
          std::make_unique<CircuitBreaker>(CircuitConfig{3, absl::Seconds(1)}));
      loads_.push_back(std::make_unique<ReplicaLoad>());
      breakers.push_back(breakers_.back().get());
      loads.push_back(loads_.back().get());
    }
    picker_ = std::make_unique<ReplicaPicker>(breakers, loads,
                                              /*max_ejected_share=*/0.5);
    budget_ = std::make_unique<HedgeBudget>(budget);
    retry_budget_ = std::make_unique<RetryBudget>(retry);
    tenant_credits_.reset();
    limits_ = std::make_unique<AdmissionLimits>(admission);
  }

  void ExpectAllReadsDone() {
    for (const auto& read : reads_) EXPECT_TRUE(read->finished());
    if (limits_ != nullptr) {
      EXPECT_EQ(limits_->attempts().in_use(), 0);
    }
  }

  void SetUp() override { Configure(2); }
  void TearDown() override { ExpectAllReadsDone(); }

  ReadDecision& NewRead(ReadOptions options = {false, kDelay}) {
    reads_.push_back(std::make_unique<ReadDecision>(
        ReadPolicy{picker_.get(), budget_.get(), retry_budget_.get(),
                   limits_.get(), tenant_credits_.get(), tenant_slot_,
                   /*payoff=*/nullptr, batch_.get()},
        options));
    return *reads_.back();
  }

  CircuitBreaker& breaker(size_t replica) { return *breakers_[replica]; }
  int consecutive_failures(size_t replica) {
    return breaker(replica).Snapshot(At(0)).consecutive_failures;
  }

  // Ejects `replica` at `now`.
  void Eject(size_t replica, absl::Time now) {
    breaker(replica).Eject(now, EjectReason::kConsecutive);
  }

  int64_t attempts_in_use() const { return limits_->attempts().in_use(); }

  std::vector<std::unique_ptr<CircuitBreaker>> breakers_;
  std::vector<std::unique_ptr<ReplicaLoad>> loads_;
  std::unique_ptr<ReplicaPicker> picker_;
  std::unique_ptr<HedgeBudget> budget_;
  std::unique_ptr<RetryBudget> retry_budget_;
  std::unique_ptr<TenantCredits> tenant_credits_;  // null unless set
  std::unique_ptr<BatchCredits> batch_;            // null unless set
  int tenant_slot_ = 0;
  std::unique_ptr<AdmissionLimits> limits_;
  std::vector<std::unique_ptr<ReadDecision>> reads_;
};

TEST(ReadDecisionNamesTest, NamesAreStable) {
  EXPECT_STREQ(AttemptKindName(AttemptKind::kPrimary), "primary");
  EXPECT_STREQ(AttemptKindName(AttemptKind::kHedge), "hedge");
  EXPECT_STREQ(AttemptKindName(AttemptKind::kFallback), "fallback");
  EXPECT_STREQ(ReadErrorName(ReadError::kOverloaded), "overloaded");
  EXPECT_STREQ(ReadErrorName(ReadError::kNoReplica), "no_replica");
  EXPECT_STREQ(ReadErrorName(ReadError::kDeadlineExceeded),
               "deadline_exceeded");
  EXPECT_STREQ(ReadErrorName(ReadError::kCancelled), "cancelled");
  EXPECT_STREQ(ReadErrorName(ReadError::kTooLarge), "too_large");
  EXPECT_STREQ(ReadErrorName(ReadError::kUpstreamFailure), "upstream_failure");
  EXPECT_STREQ(SkipReasonName(SkipReason::kNoReplica), "no_replica");
  EXPECT_STREQ(SkipReasonName(SkipReason::kNoCapacity), "no_capacity");
  EXPECT_STREQ(SkipReasonName(SkipReason::kNoBudget), "no_budget");
  EXPECT_STREQ(SkipReasonName(SkipReason::kNoRetryBudget), "no_retry_budget");
  EXPECT_STREQ(SkipReasonName(SkipReason::kNoTenantBudget), "no_tenant_budget");
}

TEST_F(ReadDecisionTest, FastPrimaryWinsWithoutHedge) {
  ReadDecision& read = NewRead();
  EXPECT_EQ(Describe(read.Start(At(0))), "launch a0 r0 primary, arm +25ms");
  EXPECT_EQ(attempts_in_use(), 1);
  EXPECT_EQ(Describe(read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(2))),
            "finish a0");
  EXPECT_TRUE(read.finished());
  EXPECT_EQ(attempts_in_use(), 0);
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(25))), "");
  EXPECT_EQ(read.attempts_launched(), 1);
  EXPECT_EQ(budget_->extra(), 0u);
}

TEST_F(ReadDecisionTest, PrimariesRotateAcrossReads) {
  ReadDecision& first = NewRead();
  ReadDecision& second = NewRead();
  EXPECT_EQ(Describe(first.Start(At(0))), "launch a0 r0 primary, arm +25ms");
  EXPECT_EQ(Describe(second.Start(At(0))), "launch a0 r1 primary, arm +25ms");
  first.OnAttemptDone(0, AttemptOutcome::kSuccess, At(1));
  second.OnAttemptDone(0, AttemptOutcome::kSuccess, At(1));
}

TEST_F(ReadDecisionTest, HedgeTimerLaunchesOnAnotherReplica) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(25))), "launch a1 r1 hedge");
  EXPECT_EQ(read.attempts_launched(), 2);
  EXPECT_EQ(read.kind(1), AttemptKind::kHedge);
  EXPECT_NE(read.replica(1), read.replica(0));
  EXPECT_EQ(attempts_in_use(), 2);
  EXPECT_EQ(budget_->extra(), 1u);
  // Only one extra attempt, however often the timer fires.
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(50))), "");
  EXPECT_EQ(Describe(read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(30))),
            "cancel a1, finish a0");
}

TEST_F(ReadDecisionTest, HedgeWinsAndThePrimaryIsCancelled) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(28))),
            "cancel a0, finish a1");
  EXPECT_EQ(attempts_in_use(), 0);
  // Late events after the finish do nothing.
  EXPECT_EQ(Describe(read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(40))),
            "");
  EXPECT_EQ(Describe(read.OnDeadline(At(1000), DeadlineSource::kCaller)), "");
  EXPECT_EQ(Describe(read.OnCancel(At(1000))), "");
}

TEST_F(ReadDecisionTest, WinnerAndLoserReachTheirBreakers) {
  // Each replica has one failure on record.
  for (size_t i = 0; i < 2; ++i) {
    breaker(i).OnFailure(*breaker(i).TryAcquire(At(0)), At(0));
  }
  ReadDecision& read = NewRead();
  read.Start(At(1000));
  ASSERT_EQ(Describe(read.OnHedgeTimer(At(1025))), "launch a1 r1 hedge");
  read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(1030));
  // The success reset replica 0's failure run and counts in its window...
  EXPECT_EQ(consecutive_failures(0), 0);
  EXPECT_EQ(breaker(0).Snapshot(At(1030)).window_outcomes, 2);
  // ...and the cancelled hedge left replica 1 as it was.
  const CircuitSnapshot loser = breaker(1).Snapshot(At(1030));
  EXPECT_EQ(loser.consecutive_failures, 1);
  EXPECT_EQ(loser.window_outcomes, 1);
  EXPECT_EQ(loser.generation, 0u);
}

TEST_F(ReadDecisionTest, FailuresReachTheBreakers) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  read.OnAttemptDone(0, AttemptOutcome::kTransportError, At(26));
  read.OnAttemptDone(1, AttemptOutcome::kTooLarge, At(27));
  EXPECT_EQ(consecutive_failures(0), 1);
  EXPECT_EQ(consecutive_failures(1), 1);
  ReadDecision& next = NewRead();  // starts at replica 1
  next.Start(At(30));
  next.OnAttemptDone(0, AttemptOutcome::kServerError, At(31));  // falls back
  next.OnAttemptDone(1, AttemptOutcome::kSuccess, At(32));
  EXPECT_EQ(consecutive_failures(1), 2);
  EXPECT_EQ(consecutive_failures(0), 0);
}

TEST_F(ReadDecisionTest, EarlyPrimaryServerErrorFallsBackAtOnce) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  EXPECT_EQ(
      Describe(read.OnAttemptDone(0, AttemptOutcome::kServerError, At(3))),
      "launch a1 r1 fallback");
  EXPECT_EQ(read.kind(1), AttemptKind::kFallback);
  EXPECT_EQ(budget_->extra(), 0u);  // paid by the retry budget
  EXPECT_EQ(retry_budget_->consumed(), 1u);
  EXPECT_EQ(attempts_in_use(), 1);  // the primary's permit is back
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(25))), "");  // no second extra
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(6))),
            "finish a1");
}

TEST_F(ReadDecisionTest, EarlyTransportErrorFallsBackAtOnce) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  EXPECT_EQ(
      Describe(read.OnAttemptDone(0, AttemptOutcome::kTransportError, At(1))),
      "launch a1 r1 fallback");
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(6))),
            "finish a1");
}

TEST_F(ReadDecisionTest, OneOfTwoFailingKeepsWaitingForTheOther) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  EXPECT_EQ(
      Describe(read.OnAttemptDone(0, AttemptOutcome::kServerError, At(26))),
      "");
  EXPECT_FALSE(read.finished());
  EXPECT_EQ(attempts_in_use(), 1);
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(27))),
            "finish a1");

  ReadDecision& other = NewRead();
  other.Start(At(100));
  other.OnHedgeTimer(At(125));
  EXPECT_EQ(Describe(other.OnAttemptDone(1, AttemptOutcome::kTransportError,
                                         At(126))),
            "");
  EXPECT_EQ(Describe(other.OnAttemptDone(0, AttemptOutcome::kSuccess, At(127))),
            "finish a0");
}

TEST_F(ReadDecisionTest, BothServerErrorsForwardTheLastOne) {
  ReadDecision& fallback = NewRead();
  fallback.Start(At(0));
  fallback.OnAttemptDone(0, AttemptOutcome::kServerError, At(1));
  EXPECT_EQ(
      Describe(fallback.OnAttemptDone(1, AttemptOutcome::kServerError, At(2))),
      "finish a1");

  ReadDecision& hedged = NewRead();
  hedged.Start(At(10));
  hedged.OnHedgeTimer(At(35));
  hedged.OnAttemptDone(1, AttemptOutcome::kServerError, At(36));
  EXPECT_EQ(
      Describe(hedged.OnAttemptDone(0, AttemptOutcome::kServerError, At(37))),
      "finish a0");
}

TEST_F(ReadDecisionTest, ServerErrorIsForwardedOverLaterTransportFailure) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnAttemptDone(0, AttemptOutcome::kServerError, At(1));
  EXPECT_EQ(
      Describe(read.OnAttemptDone(1, AttemptOutcome::kTransportError, At(2))),
      "finish a0");

  ReadDecision& too_large = NewRead();
  too_large.Start(At(10));
  too_large.OnAttemptDone(0, AttemptOutcome::kTooLarge, At(11));
  EXPECT_EQ(Describe(too_large.OnAttemptDone(1, AttemptOutcome::kServerError,
                                             At(12))),
            "finish a1");
}

TEST_F(ReadDecisionTest, TooLargeWithoutServerError) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnAttemptDone(0, AttemptOutcome::kTooLarge, At(1));
  EXPECT_EQ(
      Describe(read.OnAttemptDone(1, AttemptOutcome::kTransportError, At(2))),
      "finish too_large");

  ReadDecision& second = NewRead();
  second.Start(At(10));
  second.OnAttemptDone(0, AttemptOutcome::kTransportError, At(11));
  EXPECT_EQ(
      Describe(second.OnAttemptDone(1, AttemptOutcome::kTooLarge, At(12))),
      "finish too_large");
}

TEST_F(ReadDecisionTest, AllTransportFailuresAreAnUpstreamFailure) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnAttemptDone(0, AttemptOutcome::kTransportError, At(1));
  EXPECT_EQ(
      Describe(read.OnAttemptDone(1, AttemptOutcome::kTransportError, At(2))),
      "finish upstream_failure");
}

TEST_F(ReadDecisionTest, DeadlineCancelsEveryAttempt) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  EXPECT_EQ(Describe(read.OnDeadline(At(1000), DeadlineSource::kCaller)),
            "cancel a0, cancel a1, finish deadline_exceeded");
  EXPECT_EQ(attempts_in_use(), 0);
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(1001))), "");

  ReadDecision& single = NewRead();
  single.Start(At(2000));
  EXPECT_EQ(Describe(single.OnDeadline(At(2010), DeadlineSource::kCaller)),
            "cancel a0, finish deadline_exceeded");
}

TEST_F(ReadDecisionTest, CallerDeadlineIsNeutralForTheBreakers) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  EXPECT_EQ(Describe(read.OnDeadline(At(100), DeadlineSource::kCaller)),
            "cancel a0, cancel a1, finish deadline_exceeded");
  EXPECT_EQ(consecutive_failures(0), 0);
  EXPECT_EQ(consecutive_failures(1), 0);
}

TEST_F(ReadDecisionTest, SidecarTimeoutFailsTheAttemptsStillInFlight) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  EXPECT_EQ(
      Describe(read.OnDeadline(At(1000), DeadlineSource::kSidecarTimeout)),
      "fail a0, fail a1, finish deadline_exceeded");
  EXPECT_EQ(attempts_in_use(), 0);
  EXPECT_EQ(consecutive_failures(0), 1);
  EXPECT_EQ(consecutive_failures(1), 1);

  // An attempt that already ended is not blamed twice: each breaker gets
  // one more failure, the hedge's 5xx or the primary's timeout.
  ReadDecision& second = NewRead();
  second.Start(At(2000));
  second.OnHedgeTimer(At(2025));
  second.OnAttemptDone(1, AttemptOutcome::kServerError, At(2030));
  EXPECT_EQ(
      Describe(second.OnDeadline(At(3000), DeadlineSource::kSidecarTimeout)),
      "fail a0, finish deadline_exceeded");
  EXPECT_EQ(consecutive_failures(0), 2);
  EXPECT_EQ(consecutive_failures(1), 2);
}

TEST_F(ReadDecisionTest, SidecarTimeoutSparesAttemptsYoungerThanTheBlameAge) {
  ReadDecision& read = NewRead({false, kDelay, absl::Milliseconds(500)});
  read.Start(At(0));
  read.OnHedgeTimer(At(600));  // the hedge is 400 ms old at the timeout
  EXPECT_EQ(
      Describe(read.OnDeadline(At(1000), DeadlineSource::kSidecarTimeout)),
      "fail a0, cancel a1, finish deadline_exceeded");
  EXPECT_EQ(consecutive_failures(0), 1);
  EXPECT_EQ(consecutive_failures(1), 0);
}

TEST_F(ReadDecisionTest, DeadlineAfterOneFailureCancelsTheSurvivor) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  read.OnAttemptDone(1, AttemptOutcome::kServerError, At(30));
  EXPECT_EQ(Describe(read.OnDeadline(At(1000), DeadlineSource::kCaller)),
            "cancel a0, finish deadline_exceeded");
}

TEST_F(ReadDecisionTest, CallerCancelCancelsEveryAttempt) {
  ReadDecision& read = NewRead();
  read.Start(At(0));
  read.OnHedgeTimer(At(25));
  EXPECT_EQ(Describe(read.OnCancel(At(26))),
            "cancel a0, cancel a1, finish cancelled");
  EXPECT_EQ(attempts_in_use(), 0);
  // Cancellation is neutral for both breakers.
  EXPECT_EQ(consecutive_failures(0), 0);
  EXPECT_EQ(breaker(1).Snapshot(At(26)).window_outcomes, 0);

  ReadDecision& single = NewRead();
  single.Start(At(100));
  EXPECT_EQ(Describe(single.OnCancel(At(101))), "cancel a0, finish cancelled");
}

TEST_F(ReadDecisionTest, HedgeSkippedWithoutBudgetKeepsWaiting) {
  Configure(2, {0.5, 0});
  ReadDecision& read = NewRead();
  read.Start(At(0));
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(25))), "skip no_budget");
  EXPECT_FALSE(read.finished());
  EXPECT_EQ(attempts_in_use(), 1);  // the refused hedge's permit came back
  EXPECT_EQ(Describe(read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(40))),
            "finish a0");
}

TEST_F(ReadDecisionTest, FailedPrimaryFallsBackAfterASkippedHedge) {
  Configure(2, {0.5, 0});  // no hedge credit at all
  ReadDecision& read = NewRead();
  read.Start(At(0));
  ASSERT_EQ(Describe(read.OnHedgeTimer(At(25))), "skip no_budget");
  // The primary fails: the fallback is paid by the retry budget.
  EXPECT_EQ(
      Describe(read.OnAttemptDone(0, AttemptOutcome::kServerError, At(40))),
      "launch a1 r1 fallback");
  EXPECT_EQ(budget_->extra(), 0u);
  EXPECT_EQ(retry_budget_->consumed(), 1u);
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(41))),
            "finish a1");
}

TEST_F(ReadDecisionTest, HedgesCannotSpendTheFallbacksCredits) {
  // One retry credit in the window; hedges spend every hedge credit first.
  Configure(2, {0.5, 2}, {100, 100}, {0, 0.1, absl::Seconds(10)});
  for (int i = 0; i < 2; ++i) {
    ReadDecision& slow = NewRead();
    slow.Start(At(i));
    ASSERT_EQ(Describe(slow.OnHedgeTimer(At(i + 25))),
              absl::StrCat("launch a1 r", i % 2 == 0 ? 1 : 0, " hedge"));
    slow.OnAttemptDone(1, AttemptOutcome::kSuccess, At(i + 30));
  }
  ASSERT_DOUBLE_EQ(budget_->credits(), 0);
  ReadDecision& failing = NewRead();
  failing.Start(At(100));
  EXPECT_EQ(Describe(failing.OnAttemptDone(0, AttemptOutcome::kTransportError,
                                           At(101))),
            "launch a1 r1 fallback");
  failing.OnAttemptDone(1, AttemptOutcome::kSuccess, At(102));
  // The retry credit is spent now: the next failure goes without.
  ReadDecision& next = NewRead();
  next.Start(At(200));
  EXPECT_EQ(
      Describe(next.OnAttemptDone(0, AttemptOutcome::kServerError, At(201))),
      "skip no_retry_budget, finish a0");
}

TEST_F(ReadDecisionTest, SkippedHedgeAndSkippedFallbackEndTheRead) {
  Configure(2, {0.5, 0}, {100, 100}, {0, 0, absl::Seconds(10)});
  ReadDecision& read = NewRead();
  read.Start(At(0));
  ASSERT_EQ(Describe(read.OnHedgeTimer(At(25))), "skip no_budget");
  EXPECT_EQ(
      Describe(read.OnAttemptDone(0, AttemptOutcome::kServerError, At(40))),
      "skip no_retry_budget, finish a0");
  EXPECT_EQ(budget_->extra(), 0u);
  EXPECT_EQ(retry_budget_->consumed(), 0u);
}

TEST_F(ReadDecisionTest, TenantWithoutCreditLeavesTheHedgeBudgetAlone) {
  Configure(2, {0.5, 10});
  // A share of 0.1 of a burst of 10: one credit of the tenant's own.
  tenant_credits_ =
      std::make_unique<TenantCredits>(HedgeBudgetConfig{0.5, 10}, 0.1);
  ReadDecision& first = NewRead();
  first.Start(At(0));
  EXPECT_EQ(Describe(first.OnHedgeTimer(At(25))), "launch a1 r1 hedge");
  first.OnAttemptDone(1, AttemptOutcome::kSuccess, At(30));
  ReadDecision& second = NewRead();
  second.Start(At(40));
  EXPECT_EQ(Describe(second.OnHedgeTimer(At(65))), "skip no_tenant_budget");
  EXPECT_EQ(budget_->extra(), 1u);  // only the first hedge took from it
  EXPECT_DOUBLE_EQ(budget_->credits(), 9);
  // A fallback does not ask the tenant's hedge credits.
  EXPECT_EQ(
      Describe(second.OnAttemptDone(0, AttemptOutcome::kServerError, At(70))),
      "launch a1 r0 fallback");
  second.OnAttemptDone(1, AttemptOutcome::kSuccess, At(71));
}

TEST_F(ReadDecisionTest, BatchReadsSpendTheirBatchsCreditFirst) {
  Configure(2, {0.5, 1});
  batch_ = std::make_unique<BatchCredits>();
  // Not owned: the fixture keeps the budget.
  const std::shared_ptr<HedgeBudget> budget(std::shared_ptr<HedgeBudget>(),
                                            budget_.get());
  for (int i = 0; i < 4; ++i) batch_->OnAdmission(budget);  // 2 credits
  std::vector<std::string> hedges;
  for (int i = 0; i < 4; ++i) {
    ReadDecision& read = NewRead();
    read.Start(At(i));
    hedges.push_back(Describe(read.OnHedgeTimer(At(i + 25))));
    if (read.attempts_launched() == 2) {
      read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(i + 30));
    } else {
      read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(i + 40));
    }
    // The batch's two credits first: the balance is untouched by them.
    if (i < 2) {
      EXPECT_DOUBLE_EQ(budget_->credits(), 1) << i;
    }
  }
  EXPECT_EQ(hedges[0], "launch a1 r1 hedge");
  EXPECT_EQ(hedges[1], "launch a1 r0 hedge");
  EXPECT_EQ(hedges[2], "launch a1 r1 hedge");  // the balance's one
  EXPECT_EQ(hedges[3], "skip no_budget");
  EXPECT_EQ(budget_->extra(), 3u);
  batch_.reset();  // before the budget it holds credit of
}

TEST_F(ReadDecisionTest, HedgesLeaveTheAttemptPermitsPrimariesNeed) {
  // Three reads at once, four attempts: one may run beside its primary.
  Configure(2, {0.5, 10}, {/*max_requests=*/3, /*max_attempts=*/4});
  ReadDecision& a = NewRead();
  a.Start(At(0));
  ASSERT_EQ(Describe(a.OnHedgeTimer(At(25))), "launch a1 r1 hedge");
  ReadDecision& b = NewRead();
  b.Start(At(1));
  EXPECT_EQ(Describe(b.OnHedgeTimer(At(26))), "skip no_capacity");
  EXPECT_DOUBLE_EQ(budget_->credits(), 9);  // no credit taken for it
  // The third read's primary finds the permit b's hedge would have taken.
  ReadDecision& c = NewRead();
  EXPECT_EQ(Describe(c.Start(At(2))).substr(0, 9), "launch a0");
  // A failure fallback replaces its primary: no overlap slot needed.
  EXPECT_EQ(Describe(b.OnAttemptDone(0, AttemptOutcome::kServerError, At(30))),
            "launch a1 r0 fallback");
  // Once a's hedge is done, its slot is free for the next.
  a.OnAttemptDone(1, AttemptOutcome::kSuccess, At(31));
  EXPECT_EQ(limits_->overlaps().in_use(), 0);
  EXPECT_EQ(Describe(c.OnHedgeTimer(At(27 + 5))).substr(0, 9), "launch a1");
  c.OnAttemptDone(1, AttemptOutcome::kSuccess, At(40));
  b.OnAttemptDone(1, AttemptOutcome::kSuccess, At(41));
}

TEST_F(ReadDecisionTest, HedgeSkippedWithoutCapacityTakesNoCredit) {
  Configure(2, {0.5, 2}, {100, 1});
  ReadDecision& read = NewRead();
  read.Start(At(0));
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(25))), "skip no_capacity");
  EXPECT_EQ(budget_->extra(), 0u);  // capacity is checked before the budget
  EXPECT_DOUBLE_EQ(budget_->credits(), 2);
  read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(30));
}

TEST_F(ReadDecisionTest, HedgeSkippedWithoutAnotherReplica) {
  Configure(1);
  ReadDecision& read = NewRead();
  read.Start(At(0));
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(25))), "skip no_replica");
  EXPECT_EQ(budget_->extra(), 0u);
  EXPECT_EQ(attempts_in_use(), 1);
  read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(30));

  Configure(2);
  Eject(1, At(0));
  ReadDecision& other = NewRead();
  other.Start(At(10));
  EXPECT_EQ(Describe(other.OnHedgeTimer(At(35))), "skip no_replica");
  other.OnAttemptDone(0, AttemptOutcome::kSuccess, At(40));
}

TEST_F(ReadDecisionTest, SkipReasonsAreCheckedInOrder) {
  // No replica, no capacity and no budget at once: the replica is named.
  Configure(1, {0.5, 0}, {100, 1});
  ReadDecision& read = NewRead();
  read.Start(At(0));
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(25))), "skip no_replica");
  read.OnAttemptDone(0, AttemptOutcome::kSuccess, At(30));

  // No capacity and no budget: capacity is named.
  Configure(2, {0.5, 0}, {100, 1});
  ReadDecision& second = NewRead();
  second.Start(At(0));
  EXPECT_EQ(Describe(second.OnHedgeTimer(At(25))), "skip no_capacity");
  second.OnAttemptDone(0, AttemptOutcome::kSuccess, At(30));
}

TEST_F(ReadDecisionTest, FallbackSkippedFinishesAtOnce) {
  Configure(1);
  ReadDecision& read = NewRead();
  read.Start(At(0));
  EXPECT_EQ(
      Describe(read.OnAttemptDone(0, AttemptOutcome::kServerError, At(1))),
      "skip no_replica, finish a0");
  EXPECT_EQ(attempts_in_use(), 0);

  Configure(2, {0.5, 2}, {100, 1});
  ReadDecision& second = NewRead();
  second.Start(At(0));
  // The primary's permit is released before the fallback asks for one.
  EXPECT_EQ(
      Describe(second.OnAttemptDone(0, AttemptOutcome::kTransportError, At(1))),
      "launch a1 r1 fallback");
  second.OnAttemptDone(1, AttemptOutcome::kTransportError, At(2));
}

TEST_F(ReadDecisionTest, ZeroHedgeFractionStillFallsBack) {
  Configure(2, {0, 4});
  ReadDecision& slow = NewRead();
  slow.Start(At(0));
  EXPECT_EQ(Describe(slow.OnHedgeTimer(At(25))), "skip no_budget");
  slow.OnAttemptDone(0, AttemptOutcome::kSuccess, At(40));

  ReadDecision& failing = NewRead();
  failing.Start(At(100));
  EXPECT_EQ(
      Describe(failing.OnAttemptDone(0, AttemptOutcome::kServerError, At(101))),
      "launch a1 r0 fallback");
  failing.OnAttemptDone(1, AttemptOutcome::kSuccess, At(102));
  EXPECT_EQ(budget_->extra(), 0u);
}

TEST_F(ReadDecisionTest, ZeroRetryBudgetMeansNoFallback) {
  Configure(2, {0.5, 4}, {100, 100}, {0, 0, absl::Seconds(10)});
  ReadDecision& failing = NewRead();
  failing.Start(At(100));
  EXPECT_EQ(
      Describe(failing.OnAttemptDone(0, AttemptOutcome::kServerError, At(101))),
      "skip no_retry_budget, finish a0");
  EXPECT_EQ(budget_->extra(), 0u);
}

TEST_F(ReadDecisionTest, AllReplicasEjectedIsNoReplica) {
  Eject(0, At(0));
  Eject(1, At(0));
  ReadDecision& read = NewRead();
  EXPECT_EQ(Describe(read.Start(At(10))), "finish no_replica");
  EXPECT_TRUE(read.finished());
  EXPECT_EQ(read.attempts_launched(), 0);
  EXPECT_EQ(attempts_in_use(), 0);
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(35))), "");
  EXPECT_EQ(Describe(read.OnDeadline(At(1000), DeadlineSource::kCaller)), "");
}

TEST_F(ReadDecisionTest, NoAttemptPermitIsOverloadedAndNeutral) {
  Configure(1, {0.5, 2}, {100, 1});
  breaker(0).OnFailure(*breaker(0).TryAcquire(At(0)), At(0));
  std::optional<Permit> held = limits_->TryStartAttempt();
  ASSERT_TRUE(held.has_value());
  ReadDecision& read = NewRead();
  EXPECT_EQ(Describe(read.Start(At(1000))), "finish overloaded");
  EXPECT_EQ(attempts_in_use(), 1);  // only the one held here
  // The ticket the read was granted went back with no verdict.
  const CircuitSnapshot snapshot = breaker(0).Snapshot(At(1000));
  EXPECT_EQ(snapshot.consecutive_failures, 1);
  EXPECT_EQ(snapshot.window_outcomes, 1);
  held->Release();
}

TEST_F(ReadDecisionTest, HedgeDisabledArmsNoTimerButFallsBack) {
  ReadDecision& read = NewRead({/*hedge_disabled=*/true, kDelay});
  EXPECT_EQ(Describe(read.Start(At(0))), "launch a0 r0 primary");
  EXPECT_EQ(Describe(read.OnHedgeTimer(At(25))), "");  // ignored
  EXPECT_EQ(
      Describe(read.OnAttemptDone(0, AttemptOutcome::kServerError, At(30))),
      "launch a1 r1 fallback");
  EXPECT_EQ(Describe(read.OnAttemptDone(1, AttemptOutcome::kSuccess, At(31))),
            "finish a1");
}

TEST_F(ReadDecisionTest, TimerIsArmedAtTheChosenDelay) {
  ReadDecision& read = NewRead({false, absl::Milliseconds(5)});
  EXPECT_EQ(Describe(read.Start(At(7))), "launch a0 r0 primary, arm +12ms");
  read.OnCancel(At(8));
}

TEST_F(ReadDecisionTest, ExtraAttemptsStayWithinTheBudget) {
  // 2 starting credits and 0.5 per admission, 100 slow reads: the first
  // admission finds the balance full, so 2 + 0.5 * 99 = 51.5 credits, of
  // which the timer hedges take 51.
  Configure(2, {0.5, 2});
  for (int i = 0; i < 100; ++i) {
    budget_->OnAdmission();
    ReadDecision& read = NewRead();
    read.Start(At(i));
    read.OnHedgeTimer(At(i + 25));
    read.OnDeadline(At(i + 1000), DeadlineSource::kCaller);
  }
  int hedged = 0;
  for (const auto& read : reads_) hedged += read->attempts_launched() - 1;
  EXPECT_EQ(hedged, 51);
  EXPECT_EQ(budget_->extra(), 51u);
  EXPECT_DOUBLE_EQ(budget_->credits(), 0.5);
  EXPECT_LE(budget_->extra(), 2 + 0.5 * budget_->admitted());
}

}  // namespace
}  // namespace tailgate::hedge
