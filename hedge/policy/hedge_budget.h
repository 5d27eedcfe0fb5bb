// HedgeBudget: the credit budget for speculative timer hedges.
//
// Every admitted read earns `fraction` of a credit (the balance is capped at
// `burst`); every timer hedge costs one whole credit. The balance starts
// full at `burst`, and idle time earns nothing. Hence, at every instant:
//
//   hedges <= burst + fraction * admitted
//
// A fraction of 0 disables every timer hedge, whatever the balance. So does
// a burst below 1: earnings are capped too, so the balance never reaches a
// whole credit.
//
// The reads of a batch (ReadMany) earn into the batch's own credit
// instead of the balance, uncapped, their hedges take from there first,
// and what the batch did not spend comes back to the balance when it ends
// (batch_credits.h); the bound above holds over both.
//
// Failure fallbacks do not draw on it: they have a budget of their own
// (retry_budget.h), so hedges may spend every credit here and a primary that
// fails (a replica dying) still finds its fallback paid for.
//
// Credits are kept in fixed point (kUnitsPerCredit units per credit, the
// fraction rounded down), so the bound holds exactly, with no floating-point
// drift.
//
// Thread safety: safe from any thread (lock-free).

#ifndef TAILGATE_HEDGE_POLICY_HEDGE_BUDGET_H_
#define TAILGATE_HEDGE_POLICY_HEDGE_BUDGET_H_

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

  // Takes one credit for a hedge. False (and nothing taken) when the
  // balance is below one credit or the fraction is 0.
  bool TryConsume();

  // The balance, in credits.
  double credits() const;
  // The cap on the balance, in credits (0 when the fraction is 0).
  double burst() const;
  uint64_t admitted() const;
  uint64_t extra() const;  // credits consumed so far

 private:
  friend class BatchCredits;

  // Adds credit a batch earned and did not spend (capped at the burst).
  void Refund(int64_t units);

  // Constant after construction.
  const bool enabled_;  // fraction > 0
  const int64_t earn_units_;
  const int64_t cap_units_;

  // Sequentially consistent, so that the bound holds across the three.
  std::atomic<int64_t> balance_units_;
  std::atomic<uint64_t> admitted_{0};  // incremented before earning
  std::atomic<uint64_t> extra_{0};     // incremented after consuming
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_POLICY_HEDGE_BUDGET_H_
