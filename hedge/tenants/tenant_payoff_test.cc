#include "hedge/tenants/tenant_payoff.h"

#include "gtest/gtest.h"
#include "hedge/adaptive/hedge_payoff.h"
#include "hedge/tenants/tenant_table.h"

namespace tailgate::hedge {
namespace {

constexpr int kFlood = 1;
constexpr int kWellBehaved = 2;

int Allowed(TenantPayoff& payoff, int slot, int wanted) {
  int allowed = 0;
  for (int i = 0; i < wanted; ++i) allowed += payoff.AllowHedge(slot);
  return allowed;
}

TEST(TenantPayoffTest, OneTenantsLosingHedgesHoldBackOnlyItsOwn) {
  TenantPayoff payoff;
  // The flood's hedges all lose; the other tenant's all win.
  for (int i = 0; i < 200; ++i) {
    payoff.OnHedgeResult(kFlood, false);
    if (i % 4 == 0) payoff.OnHedgeResult(kWellBehaved, true);
  }
  EXPECT_DOUBLE_EQ(payoff.spend(kFlood), HedgePayoff::kFloor);
  EXPECT_EQ(payoff.spend(kWellBehaved), 1.0);
  EXPECT_EQ(Allowed(payoff, kFlood, 100), 10);
  EXPECT_EQ(Allowed(payoff, kWellBehaved, 100), 100);
  // Slots that heard nothing keep the gate's start: hedges pay.
  EXPECT_EQ(Allowed(payoff, 0, 100), 100);
  EXPECT_EQ(Allowed(payoff, TenantTable::kOther, 100), 100);

  // The upstream-wide figures: the lowest spend, the sum held back, and
  // the win ratio over everyone's results (mostly the flood's losses).
  EXPECT_DOUBLE_EQ(payoff.spend(), HedgePayoff::kFloor);
  EXPECT_EQ(payoff.held_back(), 90u);
  EXPECT_LT(payoff.win_ratio(), HedgePayoff::kFullAt);
}

TEST(TenantPayoffTest, WithoutTenantsItIsOneGate) {
  TenantPayoff payoff;
  HedgePayoff single;
  for (int i = 0; i < 100; ++i) {
    const bool won = i % 7 == 0;
    payoff.OnHedgeResult(0, won);
    single.OnHedgeResult(won);
  }
  EXPECT_DOUBLE_EQ(payoff.win_ratio(), single.win_ratio());
  EXPECT_DOUBLE_EQ(payoff.spend(), single.spend());
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(payoff.AllowHedge(0), single.AllowHedge()) << i;
  }
  EXPECT_EQ(payoff.held_back(), single.held_back());
}

}  // namespace
}  // namespace tailgate::hedge
