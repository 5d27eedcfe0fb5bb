#include "hedge/policy/batch_credits.h"

#include <utility>

namespace tailgate::hedge {

BatchCredits::~BatchCredits() {
  MutexLock lock(&mu_);
  for (auto& [key, held] : held_) held.budget->Refund(held.units);
}

void BatchCredits::OnAdmission(std::shared_ptr<HedgeBudget> budget) {
  // Counted before the credit is earned, as HedgeBudget::OnAdmission does.
  budget->admitted_.fetch_add(1);
  const int64_t units = budget->earn_units_;
  MutexLock lock(&mu_);
  Held& held = held_[budget.get()];
  if (held.budget == nullptr) held.budget = std::move(budget);
  held.units += units;
}

bool BatchCredits::TryConsume(HedgeBudget& budget) {
  // A burst below one credit turns every read's hedging off (the balance
  // never reaches a credit); so it does a batch's.
  if (!budget.enabled_ || budget.cap_units_ < HedgeBudget::kUnitsPerCredit) {
    return false;
  }
  {
    MutexLock lock(&mu_);
    auto it = held_.find(&budget);
    if (it == held_.end() || it->second.units < HedgeBudget::kUnitsPerCredit) {
      return false;
    }
    it->second.units -= HedgeBudget::kUnitsPerCredit;
  }
  // Counted after the credit is taken, as HedgeBudget::TryConsume does.
  budget.extra_.fetch_add(1);
  return true;
}

double BatchCredits::credits(const HedgeBudget& budget) const {
  MutexLock lock(&mu_);
  auto it = held_.find(&budget);
  if (it == held_.end()) return 0;
  return static_cast<double>(it->second.units) / HedgeBudget::kUnitsPerCredit;
}

}  // namespace tailgate::hedge
