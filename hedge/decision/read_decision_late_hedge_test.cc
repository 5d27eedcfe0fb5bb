// ReadDecision with late hedges: a hedge timer that finds the hedge budget
// (with its batch's credit) below its reserve waits for the late delay,
// once, then asks as usual; with credits enough, or without a late delay,
// the hedge goes at once.

#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "hedge/decision/read_decision.h"
#include "hedge/decision/testing_replicas.h"

namespace tailgate::hedge {
namespace {

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);
absl::Time At(int ms) { return kT0 + absl::Milliseconds(ms); }

constexpr absl::Duration kDelay = absl::Milliseconds(3);
constexpr absl::Duration kLate = absl::Milliseconds(6);

class ReadDecisionLateHedgeTest : public ::testing::Test {
 protected:
  // Spends the budget's credits down to `left` (burst 4, nothing earned).
  void SpendDownTo(int left) {
    while (budget_.credits() > left) ASSERT_TRUE(budget_.TryConsume());
  }

  std::unique_ptr<ReadDecision> NewRead(absl::Duration late = kLate,
                                        absl::Duration delay = kDelay,
                                        BatchCredits* batch = nullptr) {
    ReadOptions options;
    options.hedge_delay = delay;
    options.late_hedge_delay = late;
    options.hedge_reserve = budget_.burst() / 2;
    return std::make_unique<ReadDecision>(
        ReadPolicy{replicas_.picker(), &budget_, &retry_budget_, &limits_,
                   /*tenant_credits=*/nullptr, /*tenant_slot=*/0,
                   /*payoff=*/nullptr, batch},
        options);
  }

  static void Finish(ReadDecision& read, absl::Time now) {
    read.OnDeadline(now, DeadlineSource::kCaller);
    EXPECT_TRUE(read.finished());
  }

  TestReplicas replicas_{2};
  HedgeBudget budget_{HedgeBudgetConfig{0.25, 4}};
  RetryBudget retry_budget_{RetryBudgetConfig{}};
  AdmissionLimits limits_{AdmissionConfig{100, 100}};
};

bool IsArmAt(const Actions& actions, absl::Time at) {
  return actions.size() == 1 &&
         actions[0].type == Action::Type::kArmHedgeTimer && actions[0].at == at;
}

bool IsHedgeLaunch(const Actions& actions) {
  return actions.size() == 1 && actions[0].type == Action::Type::kLaunch &&
         actions[0].kind == AttemptKind::kHedge;
}

TEST_F(ReadDecisionLateHedgeTest, WithHalfTheBurstLeftTheHedgeGoesAtTheDelay) {
  SpendDownTo(2);  // reserve = 4 / 2: not below it
  std::unique_ptr<ReadDecision> read = NewRead();
  read->Start(At(0));
  EXPECT_TRUE(IsHedgeLaunch(read->OnHedgeTimer(At(3))));
  EXPECT_DOUBLE_EQ(budget_.credits(), 1);
  Finish(*read, At(50));
}

TEST_F(ReadDecisionLateHedgeTest, BelowTheReserveTheHedgeWaitsForTheLateDelay) {
  SpendDownTo(1);
  std::unique_ptr<ReadDecision> read = NewRead();
  read->Start(At(10));
  // Armed again for 6 ms after the primary's start; no credit taken yet.
  EXPECT_TRUE(IsArmAt(read->OnHedgeTimer(At(13)), At(16)));
  EXPECT_EQ(read->attempts_launched(), 1);
  EXPECT_DOUBLE_EQ(budget_.credits(), 1);
  // Then it asks as any hedge would, even with the balance still low.
  EXPECT_TRUE(IsHedgeLaunch(read->OnHedgeTimer(At(16))));
  EXPECT_DOUBLE_EQ(budget_.credits(), 0);
  EXPECT_EQ(budget_.extra(), 4u);  // three spent down, one hedge
  Finish(*read, At(50));
}

TEST_F(ReadDecisionLateHedgeTest, ABatchsOwnCreditCountsTowardTheReserve) {
  SpendDownTo(0);
  BatchCredits batch;
  // Not owned: the fixture keeps the budget.
  const std::shared_ptr<HedgeBudget> budget(std::shared_ptr<HedgeBudget>(),
                                            &budget_);
  for (int i = 0; i < 8; ++i) batch.OnAdmission(budget);  // 2 credits
  std::unique_ptr<ReadDecision> read = NewRead(kLate, kDelay, &batch);
  read->Start(At(0));
  EXPECT_TRUE(IsHedgeLaunch(read->OnHedgeTimer(At(3))));
  EXPECT_DOUBLE_EQ(batch.credits(budget_), 1);
  Finish(*read, At(50));
}

TEST_F(ReadDecisionLateHedgeTest, APrimaryThatAnswersMeanwhileIsNeverHedged) {
  SpendDownTo(1);
  std::unique_ptr<ReadDecision> read = NewRead();
  read->Start(At(0));
  ASSERT_TRUE(IsArmAt(read->OnHedgeTimer(At(3)), At(6)));
  read->OnAttemptDone(0, AttemptOutcome::kSuccess, At(4));
  EXPECT_TRUE(read->finished());
  EXPECT_TRUE(read->OnHedgeTimer(At(6)).empty());
  EXPECT_DOUBLE_EQ(budget_.credits(), 1);
}

TEST_F(ReadDecisionLateHedgeTest, ATimerAlreadyPastTheLateDelayAsksAtOnce) {
  SpendDownTo(1);
  std::unique_ptr<ReadDecision> read = NewRead();
  read->Start(At(0));
  EXPECT_TRUE(IsHedgeLaunch(read->OnHedgeTimer(At(7))));  // fired late
  Finish(*read, At(50));
}

TEST_F(ReadDecisionLateHedgeTest, WithoutALateDelayTheHedgeNeverWaits) {
  SpendDownTo(1);
  for (absl::Duration late : {absl::ZeroDuration(), kDelay}) {
    std::unique_ptr<ReadDecision> read = NewRead(late);
    read->Start(At(0));
    EXPECT_TRUE(IsHedgeLaunch(read->OnHedgeTimer(At(3)))) << "late " << late;
    Finish(*read, At(50));
    budget_.OnAdmission();  // back to one credit
    budget_.OnAdmission();
    budget_.OnAdmission();
    budget_.OnAdmission();
  }
}

TEST_F(ReadDecisionLateHedgeTest, ASkippedLateHedgeStillLeavesTheFallback) {
  SpendDownTo(0);
  std::unique_ptr<ReadDecision> read = NewRead();
  read->Start(At(0));
  ASSERT_TRUE(IsArmAt(read->OnHedgeTimer(At(3)), At(6)));
  const Actions skipped = read->OnHedgeTimer(At(6));
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].type, Action::Type::kExtraSkipped);
  EXPECT_EQ(skipped[0].skip, SkipReason::kNoBudget);
  const Actions fallback =
      read->OnAttemptDone(0, AttemptOutcome::kServerError, At(8));
  ASSERT_EQ(fallback.size(), 1u);
  EXPECT_EQ(fallback[0].kind, AttemptKind::kFallback);
  read->OnAttemptDone(1, AttemptOutcome::kSuccess, At(9));
  EXPECT_TRUE(read->finished());
}

// What late hedges are for: a slow spell of the host makes ten fast reads
// run 4 ms, past the 3 ms delay, and every hedge they get loses; then comes
// a straggler. Without late hedges the spell spends the whole bank and the
// straggler goes unhedged; with them the spell's reads hedge only while
// half the bank is left (the others answer before the 6 ms late delay), and
// the straggler is hedged.
TEST_F(ReadDecisionLateHedgeTest, ASlowSpellLeavesCreditsForTheStragglers) {
  for (absl::Duration late : {absl::ZeroDuration(), kLate}) {
    HedgeBudget budget(HedgeBudgetConfig{0.25, 4});
    ReadOptions options;
    options.hedge_delay = kDelay;
    options.late_hedge_delay = late;
    options.hedge_reserve = budget.burst() / 2;
    const ReadPolicy policy{replicas_.picker(), &budget, &retry_budget_,
                            &limits_};
    int start = 0;
    // Each read's events in time order, as the engine would deliver them.
    const auto read = [&](int primary_ms) {
      budget.OnAdmission();
      ReadDecision decision(policy, options);
      decision.Start(At(start));
      for (int at = 3; at < primary_ms && decision.attempts_launched() == 1;
           ++at) {
        decision.OnHedgeTimer(At(start + at));
      }
      const bool hedged = decision.attempts_launched() == 2;
      // A straggler's hedge answers 2 ms after it went; a spell read's
      // primary answers first.
      if (hedged && primary_ms > 10) {
        decision.OnAttemptDone(1, AttemptOutcome::kSuccess, At(start + 9));
      } else {
        decision.OnAttemptDone(0, AttemptOutcome::kSuccess,
                               At(start + primary_ms));
      }
      EXPECT_TRUE(decision.finished());
      start += 100;
      return hedged;
    };
    int spell_hedges = 0;
    for (int i = 0; i < 10; ++i) spell_hedges += read(4) ? 1 : 0;
    const bool straggler = read(40);
    if (late == absl::ZeroDuration()) {
      EXPECT_EQ(spell_hedges, 6);  // all of 4 banked + 10 * 0.25 earned
      EXPECT_FALSE(straggler);
    } else {
      EXPECT_EQ(spell_hedges, 5);  // only with 2 credits or more left
      EXPECT_TRUE(straggler);
    }
  }
}

}  // namespace
}  // namespace tailgate::hedge
