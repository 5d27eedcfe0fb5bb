#include "hedge/tenants/tenant_credits.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tailgate::hedge {

TenantCredits::TenantCredits(const HedgeBudgetConfig& upstream, double share)
    : max_reserve_(std::max(0.0, std::floor(upstream.burst) - 1)) {
  // At least one credit, or the tenant could never hedge.
  const HedgeBudgetConfig own{upstream.fraction,
                              std::max(1.0, share * upstream.burst)};
  for (auto& balance : balances_) balance = std::make_unique<HedgeBudget>(own);
  for (auto& last : last_admitted_) {
    last.store(std::numeric_limits<int64_t>::min(), std::memory_order_relaxed);
  }
}

void TenantCredits::OnAdmission(int slot, absl::Time now) {
  // A late store of an earlier time only ages the slot a little early.
  last_admitted_[slot].store(absl::ToUnixNanos(now), std::memory_order_relaxed);
  balances_[slot]->OnAdmission();
}

double TenantCredits::ReservedForOthers(int slot, absl::Time now) const {
  const int64_t active_since = absl::ToUnixNanos(now - kActiveWindow);
  double reserved = 0;
  for (int other = 0; other < TenantTable::kSlots; ++other) {
    if (other == slot ||
        last_admitted_[other].load(std::memory_order_relaxed) < active_since) {
      continue;
    }
    reserved += std::floor(balances_[other]->credits());
  }
  return std::min(reserved, max_reserve_);
}

TenantCredits::Result TenantCredits::TryConsume(int slot, HedgeBudget& shared,
                                                absl::Time now) {
  HedgeBudget& own = *balances_[slot];
  if (own.credits() < 1) return Result::kNoTenantCredit;
  if (shared.credits() < 1 + ReservedForOthers(slot, now)) {
    return Result::kNoSharedCredit;
  }
  // Only this thread takes credits: both are still there.
  if (!own.TryConsume()) return Result::kNoTenantCredit;
  if (!shared.TryConsume()) return Result::kNoSharedCredit;
  return Result::kTaken;
}

}  // namespace tailgate::hedge
