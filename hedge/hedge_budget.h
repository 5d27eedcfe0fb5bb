// HedgeBudget: the aggregate credit budget for extra attempts.
//
// Every admitted read earns `fraction` of a credit (the balance is capped at
// `burst`); every extra attempt (timer hedge or failure fallback) costs one
// whole credit. The balance starts full at `burst`, and idle time earns
// nothing. Hence, at every instant:
//
//   extra_attempts <= burst + fraction * admitted
//
// A fraction of 0 disables every extra attempt, including failure fallbacks,
// whatever the balance. So does a burst below 1: earnings are capped too, so
// the balance never reaches a whole credit.
//
// Fallbacks come first: a speculative timer hedge must leave a reserve of
// min(1, burst - 1) credits in the balance, which only a failure fallback
// may take. When slow reads want more hedges than the fraction earns,
// hedges still spend everything earned above the reserve, and a primary
// that fails (a replica dying) still finds a credit for its fallback.
//
// Credits are kept in fixed point (kUnitsPerCredit units per credit, the
// fraction rounded down), so the bound holds exactly, with no floating-point
// drift.
//
// Thread safety: safe from any thread (lock-free).

#ifndef TAILGATE_HEDGE_HEDGE_BUDGET_H_
#define TAILGATE_HEDGE_HEDGE_BUDGET_H_

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"

namespace tailgate::hedge {

struct HedgeBudgetConfig {
  double fraction = 0.1;  // credit earned per admission, in [0, 1]
  double burst = 2;       // cap on the balance, and the starting balance;
                          // in [0, 1e9]
};

// Checks the ranges above (NaN and infinity fail); the message names the bad
// field by its flag name, e.g. "hedge_fraction must be in [0, 1], got 1.5".
absl::Status ValidateHedgeBudgetConfig(const HedgeBudgetConfig& config);

class HedgeBudget {
 public:
  static constexpr int64_t kUnitsPerCredit = 1'000'000;

  // REQUIRES: ValidateHedgeBudgetConfig(config).ok()
  explicit HedgeBudget(const HedgeBudgetConfig& config);

  HedgeBudget(const HedgeBudget&) = delete;
  HedgeBudget& operator=(const HedgeBudget&) = delete;

  // Earns `fraction` for one admitted read.
  void OnAdmission();

  enum class Spend {
    kFallback,  // a failed primary's retry: may take the reserve
    kHedge,     // a speculative timer hedge: leaves the reserve
  };

  // Takes one credit for an extra attempt. False (and nothing taken) when
  // the balance is below one credit (plus the reserve, for kHedge) or the
  // fraction is 0.
  bool TryConsume(Spend spend = Spend::kFallback);

  // The balance, in credits.
  double credits() const;
  uint64_t admitted() const;
  uint64_t extra() const;  // credits consumed so far

 private:
  // Constant after construction.
  const bool enabled_;  // fraction > 0
  const int64_t earn_units_;
  const int64_t cap_units_;
  const int64_t reserve_units_;  // left in the balance by kHedge

  // Sequentially consistent, so that the bound holds across the three.
  std::atomic<int64_t> balance_units_;
  std::atomic<uint64_t> admitted_{0};  // incremented before earning
  std::atomic<uint64_t> extra_{0};     // incremented after consuming
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_HEDGE_BUDGET_H_
