// ReadDecision with payoff gates: which reads report to their tenant's
// gate (not one whose hedge lost before it had run half the delay), a gate that
// has seen hedges lose holds timer hedges back but never a failure fallback,
// and never another tenant's.

#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "hedge/adaptive/hedge_payoff.h"
#include "hedge/decision/read_decision.h"
#include "hedge/decision/testing_replicas.h"
#include "hedge/tenants/tenant_payoff.h"

namespace tailgate::hedge {
namespace {

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);
absl::Time At(int ms) { return kT0 + absl::Milliseconds(ms); }

class ReadDecisionPayoffTest : public ::testing::Test {
 protected:
  std::unique_ptr<ReadDecision> NewRead(int tenant_slot = 0,
                                        BatchCredits* batch = nullptr) {
    return std::make_unique<ReadDecision>(
        ReadPolicy{replicas_.picker(), &budget_, &retry_budget_, &limits_,
                   /*tenant_credits=*/nullptr, tenant_slot, &payoff_, batch},
        ReadOptions{false, absl::Milliseconds(5)});
  }

  // A read whose hedge timer fires at 5 ms; the primary answers at
  // `primary_ms`, the hedge (if the gate let it go) at `hedge_ms`,
  // whichever comes first.
  // Returns whether the hedge went.
  bool HedgedRead(int primary_ms, int hedge_ms, int tenant_slot = 0) {
    std::unique_ptr<ReadDecision> read = NewRead(tenant_slot);
    read->Start(At(0));
    read->OnHedgeTimer(At(5));
    if (read->attempts_launched() == 1 || primary_ms <= hedge_ms) {
      read->OnAttemptDone(0, AttemptOutcome::kSuccess, At(primary_ms));
    } else {
      read->OnAttemptDone(1, AttemptOutcome::kSuccess, At(hedge_ms));
    }
    EXPECT_TRUE(read->finished());
    return read->attempts_launched() == 2;
  }

  TestReplicas replicas_{2};
  HedgeBudget budget_{HedgeBudgetConfig{1.0, 1000}};
  RetryBudget retry_budget_{RetryBudgetConfig{}};
  AdmissionLimits limits_{AdmissionConfig{100, 100}};
  TenantPayoff payoff_;
};

TEST_F(ReadDecisionPayoffTest, WinsAndLossesOfTimerHedgesAreReported) {
  for (int i = 0; i < 50; ++i) HedgedRead(/*primary_ms=*/40, /*hedge_ms=*/8);
  EXPECT_GT(payoff_.win_ratio(), 0.95);
  for (int i = 0; i < 500; ++i) HedgedRead(/*primary_ms=*/40, /*hedge_ms=*/45);
  EXPECT_LT(payoff_.win_ratio(), HedgePayoff::kFloorAt);
  EXPECT_GT(payoff_.held_back(), 0u);
}

TEST_F(ReadDecisionPayoffTest, ALossBeforeHalfTheDelayTellsNothing) {
  // Hedge at 5 ms; the primary answers 2 ms later: the read was barely
  // late, the hedge had no time to show anything.
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(HedgedRead(/*primary_ms=*/7, /*hedge_ms=*/9));
  }
  EXPECT_EQ(payoff_.win_ratio(), 1.0);
  // Half the delay (2.5 ms) and more: a loss.
  HedgedRead(/*primary_ms=*/8, /*hedge_ms=*/9);
  EXPECT_LT(payoff_.win_ratio(), 1.0);
}

TEST_F(ReadDecisionPayoffTest, ABatchsOwnCreditIsNeitherHeldBackNorJudged) {
  for (int i = 0; i < 500; ++i) HedgedRead(/*primary_ms=*/40, /*hedge_ms=*/45);
  ASSERT_LT(payoff_.win_ratio(), HedgePayoff::kFloorAt);
  const double ratio = payoff_.win_ratio();
  BatchCredits batch;
  // Not owned: the fixture keeps the budget.
  const std::shared_ptr<HedgeBudget> budget(std::shared_ptr<HedgeBudget>(),
                                            &budget_);
  for (int i = 0; i < 5; ++i) batch.OnAdmission(budget);  // 5 credits
  for (int i = 0; i < 5; ++i) {
    std::unique_ptr<ReadDecision> read = NewRead(/*tenant_slot=*/0, &batch);
    read->Start(At(0));
    read->OnHedgeTimer(At(5));
    EXPECT_EQ(read->attempts_launched(), 2) << i;
    read->OnAttemptDone(0, AttemptOutcome::kSuccess, At(40));  // a loss
  }
  EXPECT_EQ(payoff_.win_ratio(), ratio);
  EXPECT_DOUBLE_EQ(batch.credits(budget_), 0);
  // With the batch's credit spent, the gate decides again.
  int launched = 0;
  for (int i = 0; i < 5; ++i) {
    std::unique_ptr<ReadDecision> read = NewRead(/*tenant_slot=*/0, &batch);
    read->Start(At(100));
    read->OnHedgeTimer(At(105));
    launched += read->attempts_launched() - 1;
    read->OnDeadline(At(200), DeadlineSource::kCaller);
  }
  EXPECT_LT(launched, 5);
}

TEST_F(ReadDecisionPayoffTest, DeadlineIsALossAndCancelTellsNothing) {
  std::unique_ptr<ReadDecision> read = NewRead();
  read->Start(At(0));
  read->OnHedgeTimer(At(5));
  read->OnDeadline(At(100), DeadlineSource::kSidecarTimeout);
  EXPECT_LT(payoff_.win_ratio(), 1.0);
  const double after_deadline = payoff_.win_ratio();

  read = NewRead();
  read->Start(At(0));
  read->OnHedgeTimer(At(5));
  read->OnCancel(At(6));
  EXPECT_EQ(payoff_.win_ratio(), after_deadline);

  // A read answered before its hedge timer launched nothing to judge.
  read = NewRead();
  read->Start(At(0));
  read->OnAttemptDone(0, AttemptOutcome::kSuccess, At(2));
  EXPECT_EQ(payoff_.win_ratio(), after_deadline);
}

TEST_F(ReadDecisionPayoffTest, LosingGateHoldsHedgesBackButNotFallbacks) {
  for (int i = 0; i < 100; ++i) payoff_.OnHedgeResult(0, false);
  int hedged = 0;
  for (int i = 0; i < 100; ++i) {
    std::unique_ptr<ReadDecision> read = NewRead();
    read->Start(At(0));
    const Actions actions = read->OnHedgeTimer(At(5));
    hedged += read->attempts_launched() == 2;
    if (read->attempts_launched() == 1) {
      ASSERT_EQ(actions.size(), 1u);
      EXPECT_EQ(actions[0].type, Action::Type::kExtraSkipped);
      EXPECT_EQ(actions[0].skip, SkipReason::kNoBudget);
      // The primary then fails: its fallback does not ask the gate.
      read->OnAttemptDone(0, AttemptOutcome::kTransportError, At(6));
      ASSERT_EQ(read->attempts_launched(), 2);
      EXPECT_EQ(read->kind(1), AttemptKind::kFallback);
      read->OnAttemptDone(1, AttemptOutcome::kSuccess, At(8));
    } else {
      read->OnAttemptDone(0, AttemptOutcome::kSuccess, At(40));
    }
    ASSERT_TRUE(read->finished());
  }
  EXPECT_EQ(hedged, 10);  // the floor: one probe in ten
}

TEST_F(ReadDecisionPayoffTest, OneTenantsLosingHedgesLeaveAnothersAlone) {
  constexpr int kFlood = 1;
  constexpr int kWellBehaved = 2;
  // The flood's reads are slow on every replica: its hedges lose.
  for (int i = 0; i < 200; ++i) {
    HedgedRead(/*primary_ms=*/40, /*hedge_ms=*/45, kFlood);
  }
  EXPECT_DOUBLE_EQ(payoff_.spend(kFlood), HedgePayoff::kFloor);
  int flood_hedged = 0;
  int well_behaved_hedged = 0;
  for (int i = 0; i < 100; ++i) {
    flood_hedged += HedgedRead(/*primary_ms=*/40, /*hedge_ms=*/45, kFlood);
    well_behaved_hedged +=
        HedgedRead(/*primary_ms=*/40, /*hedge_ms=*/8, kWellBehaved);
  }
  EXPECT_EQ(flood_hedged, 10);          // its own gate's floor
  EXPECT_EQ(well_behaved_hedged, 100);  // every hedge it wanted
  EXPECT_EQ(payoff_.spend(kWellBehaved), 1.0);
}

}  // namespace
}  // namespace tailgate::hedge
