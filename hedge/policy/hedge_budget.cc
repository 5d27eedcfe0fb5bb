#include "hedge/policy/hedge_budget.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "hedge/errors/field_error.h"

namespace tailgate::hedge {
namespace {

// Keeps burst * kUnitsPerCredit far inside int64 (about 9.2e18).
constexpr int64_t kMaxBurst = 1'000'000'000;

}  // namespace

absl::Status ValidateHedgeBudgetConfig(const HedgeBudgetConfig& config) {
  // Written so that NaN fails too.
  if (!(config.fraction >= 0 && config.fraction <= 1)) {
    return FieldError("hedge_fraction",
                      absl::StrCat("must be in [0, 1], got ", config.fraction));
  }
  if (!(config.burst >= 0 && config.burst <= kMaxBurst)) {
    return FieldError("hedge_burst", absl::StrCat("must be in [0, ", kMaxBurst,
                                                  "], got ", config.burst));
  }
  return absl::OkStatus();
}

HedgeBudget::HedgeBudget(const HedgeBudgetConfig& config)
    : enabled_(config.fraction > 0),
      earn_units_(
          static_cast<int64_t>(std::floor(config.fraction * kUnitsPerCredit))),
      cap_units_(
          static_cast<int64_t>(std::floor(config.burst * kUnitsPerCredit))),
      balance_units_(cap_units_) {}

void HedgeBudget::OnAdmission() {
  // Counted before the credit is earned, so that a reader who loads extra()
  // and then admitted() always sees the bound hold.
  admitted_.fetch_add(1);
  int64_t balance = balance_units_.load();
  int64_t next;
  do {
    next = std::min(balance + earn_units_, cap_units_);
    if (next == balance) return;  // already full
  } while (!balance_units_.compare_exchange_weak(balance, next));
}

bool HedgeBudget::TryConsume() {
  if (!enabled_) return false;
  int64_t balance = balance_units_.load();
  do {
    if (balance < kUnitsPerCredit) return false;
  } while (!balance_units_.compare_exchange_weak(balance,
                                                 balance - kUnitsPerCredit));
  // Counted after the credit is taken: extra() never runs ahead of it.
  extra_.fetch_add(1);
  return true;
}

void HedgeBudget::Refund(int64_t units) {
  if (units <= 0) return;
  int64_t balance = balance_units_.load();
  int64_t next;
  do {
    next = std::min(balance + units, cap_units_);
    if (next <= balance) return;  // already full
  } while (!balance_units_.compare_exchange_weak(balance, next));
}

double HedgeBudget::credits() const {
  return static_cast<double>(balance_units_.load()) / kUnitsPerCredit;
}

double HedgeBudget::burst() const {
  return enabled_ ? static_cast<double>(cap_units_) / kUnitsPerCredit : 0;
}

uint64_t HedgeBudget::admitted() const { return admitted_.load(); }

uint64_t HedgeBudget::extra() const { return extra_.load(); }

}  // namespace tailgate::hedge
