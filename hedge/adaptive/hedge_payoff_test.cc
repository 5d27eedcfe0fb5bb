#include "hedge/adaptive/hedge_payoff.h"

#include "gtest/gtest.h"
#include "hedge/policy/hedge_budget.h"

namespace tailgate::hedge {
namespace {

// Of `wanted` hedges, how many the payoff lets through.
int Allowed(HedgePayoff& payoff, int wanted) {
  int allowed = 0;
  for (int i = 0; i < wanted; ++i) allowed += payoff.AllowHedge();
  return allowed;
}

TEST(HedgePayoffTest, HedgesPayUntilShownOtherwise) {
  HedgePayoff payoff;
  EXPECT_EQ(payoff.win_ratio(), 1.0);
  EXPECT_EQ(payoff.spend(), 1.0);
  EXPECT_EQ(Allowed(payoff, 100), 100);
  EXPECT_EQ(payoff.held_back(), 0u);
}

TEST(HedgePayoffTest, LosingHedgesCutTheSpendToTheFloorStillProbing) {
  HedgePayoff payoff;
  for (int i = 0; i < 100; ++i) payoff.OnHedgeResult(false);
  EXPECT_LT(payoff.win_ratio(), HedgePayoff::kFloorAt);
  EXPECT_DOUBLE_EQ(payoff.spend(), HedgePayoff::kFloor);
  // One wanted hedge in ten still goes: the probe.
  EXPECT_EQ(Allowed(payoff, 1000), 100);
  EXPECT_EQ(payoff.held_back(), 900u);
}

TEST(HedgePayoffTest, WinsComingBackRestoreTheSpend) {
  HedgePayoff payoff;
  for (int i = 0; i < 100; ++i) payoff.OnHedgeResult(false);
  int probes = 0;
  // Only the probes that go can report a win.
  while (payoff.spend() < 1.0) {
    ASSERT_LT(probes, 20) << "spend still " << payoff.spend();
    if (payoff.AllowHedge()) {
      payoff.OnHedgeResult(true);
      ++probes;
    }
  }
  EXPECT_EQ(Allowed(payoff, 100), 100);
}

TEST(HedgePayoffTest, SpendIsLinearBetweenTheThresholds) {
  HedgePayoff payoff;
  // Wins one time in seven: a ratio settling near 0.14, between kFloorAt
  // and kFullAt.
  for (int i = 0; i < 700; ++i) payoff.OnHedgeResult(i % 7 == 0);
  EXPECT_GT(payoff.spend(), HedgePayoff::kFloor);
  EXPECT_LT(payoff.spend(), 1.0);
  const double expected =
      HedgePayoff::kFloor +
      (1 - HedgePayoff::kFloor) * (payoff.win_ratio() - HedgePayoff::kFloorAt) /
          (HedgePayoff::kFullAt - HedgePayoff::kFloorAt);
  EXPECT_NEAR(payoff.spend(), expected, 1e-12);
}

// The payoff only refuses: consulted before the budget, the budget's bound
// holds whatever it says.
TEST(HedgePayoffTest, BudgetBoundHoldsWithThePayoffInFront) {
  HedgeBudget budget(HedgeBudgetConfig{0.1, 2});
  HedgePayoff payoff;
  for (int read = 0; read < 10000; ++read) {
    budget.OnAdmission();
    if (payoff.AllowHedge() && budget.TryConsume()) {
      payoff.OnHedgeResult(read % 3 == 0);
    }
    ASSERT_LE(budget.extra(), 2 + 0.1 * budget.admitted());
  }
}

}  // namespace
}  // namespace tailgate::hedge
