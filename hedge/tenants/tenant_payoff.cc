#include "hedge/tenants/tenant_payoff.h"

#include <algorithm>

namespace tailgate::hedge {

void TenantPayoff::OnHedgeResult(int slot, bool won) {
  gates_[slot].OnHedgeResult(won);
  overall_.OnHedgeResult(won);
}

double TenantPayoff::spend() const {
  double lowest = 1.0;
  for (const HedgePayoff& gate : gates_)
    lowest = std::min(lowest, gate.spend());
  return lowest;
}

uint64_t TenantPayoff::held_back() const {
  uint64_t sum = 0;
  for (const HedgePayoff& gate : gates_) sum += gate.held_back();
  return sum;
}

}  // namespace tailgate::hedge
