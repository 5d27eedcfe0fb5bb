// TenantPayoff: one upstream's hedge payoff gates, one per tenant slot
// (tenants: hedge/tenants/tenant_table.h; the gate:
// hedge/adaptive/hedge_payoff.h).
//
// A tenant flooding reads that are slow on every replica wants a hedge for
// each, and each of those hedges loses. With one gate per upstream, those
// losses would cut the speculative spend of every tenant, and a
// well-behaved tenant whose hedges win would lose most of them. So each
// slot's gate hears only its own tenant's results and holds back only its
// own tenant's hedges. Reads that name no tenant share the slot of the
// tenant "", so a sidecar without tenants has exactly one gate, as before.
//
// Upstream-wide figures, for stats: win_ratio() over every tenant's hedge
// results (a gate fed them all, which gates nothing); spend() the lowest
// spend level of any slot's gate (below 1: some tenant's hedges are being
// held back); held_back() the sum over the slots.
//
// Thread safety: safe from any thread (each gate has its own lock).

#ifndef TAILGATE_HEDGE_TENANTS_TENANT_PAYOFF_H_
#define TAILGATE_HEDGE_TENANTS_TENANT_PAYOFF_H_

#include <array>
#include <cstdint>

#include "hedge/adaptive/hedge_payoff.h"
#include "hedge/tenants/tenant_table.h"

namespace tailgate::hedge {

class TenantPayoff {
 public:
  TenantPayoff() = default;
  TenantPayoff(const TenantPayoff&) = delete;
  TenantPayoff& operator=(const TenantPayoff&) = delete;

  // HedgePayoff::AllowHedge of `slot`'s gate.
  // REQUIRES: 0 <= slot < TenantTable::kSlots (also below).
  bool AllowHedge(int slot) { return gates_[slot].AllowHedge(); }

  // A read of `slot` whose timer hedge was launched ended.
  void OnHedgeResult(int slot, bool won);

  double win_ratio() const { return overall_.win_ratio(); }
  double spend() const;
  uint64_t held_back() const;

  double spend(int slot) const { return gates_[slot].spend(); }

 private:
  std::array<HedgePayoff, TenantTable::kSlots> gates_;
  HedgePayoff overall_;  // fed every result; never asked to allow
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_TENANTS_TENANT_PAYOFF_H_
