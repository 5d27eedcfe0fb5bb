#include "hedge/tenants/tenant_credits.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

using Result = TenantCredits::Result;

const absl::Time kNow = absl::UnixEpoch() + absl::Hours(1);
constexpr int kA = 0;
constexpr int kB = 1;

TEST(TenantCreditsTest, ATenantBanksItsShareOfTheBurst) {
  TenantCredits tenants({0.25, 4}, 0.5);
  EXPECT_DOUBLE_EQ(tenants.credits(kA), 2);
  // Never less than one credit, or the tenant could never hedge.
  EXPECT_DOUBLE_EQ(TenantCredits({0.25, 4}, 0.01).credits(kA), 1);
  EXPECT_DOUBLE_EQ(TenantCredits({0.25, 4}, 1).credits(kA), 4);
}

TEST(TenantCreditsTest, AHedgeTakesFromTheTenantAndTheUpstream) {
  HedgeBudget shared({0.25, 4});
  TenantCredits tenants({0.25, 4}, 0.5);
  EXPECT_EQ(tenants.TryConsume(kB, shared, kNow), Result::kTaken);
  EXPECT_EQ(tenants.TryConsume(kB, shared, kNow), Result::kTaken);
  EXPECT_EQ(tenants.TryConsume(kB, shared, kNow), Result::kNoTenantCredit);
  EXPECT_DOUBLE_EQ(tenants.credits(kB), 0);
  EXPECT_DOUBLE_EQ(shared.credits(), 2);
  EXPECT_EQ(shared.extra(), 2u);
  // Its own reads earn it more; another tenant's do not.
  for (int i = 0; i < 4; ++i) tenants.OnAdmission(kA, kNow);
  EXPECT_EQ(tenants.TryConsume(kB, shared, kNow), Result::kNoTenantCredit);
  for (int i = 0; i < 4; ++i) tenants.OnAdmission(kB, kNow);
  EXPECT_DOUBLE_EQ(tenants.credits(kB), 1);
}

TEST(TenantCreditsTest, AFloodLeavesTheOthersBankedCreditsInTheUpstream) {
  // Burst 4 shared, 2 per tenant. "a" has had a read and banked 2 credits;
  // "b" floods: it may take the shared credits only down to those 2.
  HedgeBudget shared({0.25, 4});
  TenantCredits tenants({0.25, 4}, 0.5);
  tenants.OnAdmission(kA, kNow);
  tenants.OnAdmission(kB, kNow);
  EXPECT_EQ(tenants.TryConsume(kB, shared, kNow), Result::kTaken);  // 4 -> 3
  EXPECT_EQ(tenants.TryConsume(kB, shared, kNow), Result::kTaken);  // 3 -> 2
  EXPECT_EQ(tenants.TryConsume(kB, shared, kNow), Result::kNoTenantCredit);
  // "b" earns a credit of its own; the shared balance holds only "a"'s.
  for (int i = 0; i < 4; ++i) tenants.OnAdmission(kB, kNow);
  ASSERT_DOUBLE_EQ(tenants.credits(kB), 1);
  EXPECT_EQ(tenants.TryConsume(kB, shared, kNow), Result::kNoSharedCredit);
  EXPECT_DOUBLE_EQ(shared.credits(), 2);
  EXPECT_DOUBLE_EQ(tenants.credits(kB), 1);  // nothing taken
  // "a" finds its credits backed, except the shared one that now backs
  // the credit "b" has banked: every tenant's banked credits count.
  EXPECT_EQ(tenants.TryConsume(kA, shared, kNow), Result::kTaken);  // 2 -> 1
  EXPECT_EQ(tenants.TryConsume(kA, shared, kNow), Result::kNoSharedCredit);
  EXPECT_EQ(tenants.TryConsume(kB, shared, kNow), Result::kNoSharedCredit);
  // Until the upstream earns more.
  for (int i = 0; i < 4; ++i) shared.OnAdmission();                 // 1 -> 2
  EXPECT_EQ(tenants.TryConsume(kA, shared, kNow), Result::kTaken);  // 2 -> 1
  EXPECT_EQ(tenants.TryConsume(kB, shared, kNow), Result::kTaken);  // 1 -> 0
  EXPECT_DOUBLE_EQ(shared.credits(), 0);
  EXPECT_EQ(shared.extra(), 5u);
}

TEST(TenantCreditsTest, TheReserveNeverExceedsBurstMinusOne) {
  // Three other tenants bank a credit each, but the shared burst is 2: one
  // credit is held back, and a busy tenant can still take the other.
  HedgeBudget shared({0.5, 2});
  TenantCredits tenants({0.5, 2}, 0.5);
  for (int slot : {1, 2, 3}) tenants.OnAdmission(slot, kNow);
  tenants.OnAdmission(kA, kNow);
  EXPECT_EQ(tenants.TryConsume(kA, shared, kNow), Result::kTaken);  // 2 -> 1
  tenants.OnAdmission(kA, kNow);
  tenants.OnAdmission(kA, kNow);
  EXPECT_EQ(tenants.TryConsume(kA, shared, kNow), Result::kNoSharedCredit);
}

TEST(TenantCreditsTest, AQuietTenantHoldsNothingBack) {
  HedgeBudget shared({0.5, 2});
  TenantCredits tenants({0.5, 2}, 1);  // 2 banked per tenant
  tenants.OnAdmission(kA, kNow);
  tenants.OnAdmission(kB, kNow);
  // "a" read a moment ago: of its 2 credits, burst - 1 = 1 is held back
  // from "b".
  const absl::Time soon = kNow + TenantCredits::kActiveWindow;
  EXPECT_EQ(tenants.TryConsume(kB, shared, soon), Result::kTaken);  // 2 -> 1
  EXPECT_EQ(tenants.TryConsume(kB, shared, soon), Result::kNoSharedCredit);
  // A moment later "a" has gone quiet.
  const absl::Time later = soon + absl::Nanoseconds(1);
  EXPECT_EQ(tenants.TryConsume(kB, shared, later), Result::kTaken);  // 1 -> 0
}

TEST(TenantCreditsTest, UnusedSlotsReserveNothing) {
  HedgeBudget shared({0.5, 2});
  TenantCredits tenants({0.5, 2}, 1);  // every slot starts with 2 banked
  EXPECT_EQ(tenants.TryConsume(kA, shared, kNow), Result::kTaken);
  EXPECT_EQ(tenants.TryConsume(kA, shared, kNow), Result::kTaken);
}

TEST(TenantCreditsTest, ZeroFractionTakesNothing) {
  HedgeBudget shared({0, 2});
  TenantCredits tenants({0, 2}, 0.5);
  EXPECT_EQ(tenants.TryConsume(kA, shared, kNow), Result::kNoTenantCredit);
  EXPECT_EQ(shared.extra(), 0u);
}

}  // namespace
}  // namespace tailgate::hedge
