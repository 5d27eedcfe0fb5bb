// TenantCredits: each tenant's own share of one upstream's hedge credits
// (tenants: hedge/tenants/tenant_table.h).
//
// Every tenant slot has a balance of its own, earned only by its own reads
// (`fraction` of a credit each, the upstream's rate) and capped at
// max(1, share * burst). A timer hedge of tenant t takes one credit from
// t's balance and one from the upstream's HedgeBudget, so both bounds hold
// at every instant:
//
//   hedges of the upstream <= burst + fraction * admitted
//   hedges of tenant t     <= max(1, share * burst) + fraction * admitted_t
//
// and a tenant flooding slow reads spends only what its own reads earned.
// The upstream's balance is shared, though: so that a flood cannot empty it
// under another tenant's feet, a hedge of t must leave in it the whole
// credits the other active tenants (a read admitted within kActiveWindow)
// have banked, which their own hedges may then take. At most burst - 1 are
// held back so, and a tenant gone quiet holds back nothing.
//
// Thread safety: OnAdmission and credits() are safe from any thread.
// TryConsume must be called from one thread at a time (the engine loop,
// which drives every ReadDecision): credits only grow meanwhile, so what it
// checks still holds when it takes them.

#ifndef TAILGATE_HEDGE_TENANTS_TENANT_CREDITS_H_
#define TAILGATE_HEDGE_TENANTS_TENANT_CREDITS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/time/time.h"
#include "hedge/policy/hedge_budget.h"
#include "hedge/tenants/tenant_table.h"

namespace tailgate::hedge {

class TenantCredits {
 public:
  enum class Result { kTaken, kNoTenantCredit, kNoSharedCredit };

  static constexpr absl::Duration kActiveWindow = absl::Seconds(1);

  // `upstream`: the upstream's own budget settings; `share` in (0, 1].
  // REQUIRES: ValidateHedgeBudgetConfig(upstream).ok()
  TenantCredits(const HedgeBudgetConfig& upstream, double share);

  TenantCredits(const TenantCredits&) = delete;
  TenantCredits& operator=(const TenantCredits&) = delete;

  // Earns for one admitted read of tenant slot `slot`, admitted at `now`.
  void OnAdmission(int slot, absl::Time now);

  // Takes a credit from `slot`'s balance and one from `shared` (the
  // upstream's budget) for one hedge, or says which was missing (and takes
  // nothing, unless `shared` refuses a credit it showed: then the tenant's
  // is spent without a hedge, which keeps both bounds).
  Result TryConsume(int slot, HedgeBudget& shared, absl::Time now);

  double credits(int slot) const { return balances_[slot]->credits(); }

 private:
  // Whole credits banked by the slots other than `slot` that were active
  // at `now`, at most max_reserve_.
  double ReservedForOthers(int slot, absl::Time now) const;

  // Constant after construction.
  const double max_reserve_;  // upstream burst - 1, at least 0
  std::array<std::unique_ptr<HedgeBudget>, TenantTable::kSlots> balances_;

  // When each slot last admitted a read, in nanoseconds since the epoch
  // of `now`; INT64_MIN: never.
  std::array<std::atomic<int64_t>, TenantTable::kSlots> last_admitted_;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_TENANTS_TENANT_CREDITS_H_
