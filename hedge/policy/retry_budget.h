// RetryBudget: the credits that pay for failure fallbacks, apart from the
// speculative hedge credits (HedgeBudget), in the manner of Finagle's
// RetryBudget: a percentage of the reads of a sliding window, plus a small
// floor per second so that a quiet upstream can still retry.
//
// Every admitted read deposits `fraction` of a credit into the current slice
// of a window of `window` (kSlices slices); every fallback withdraws one
// credit from it. Deposits and withdrawals expire with their slice. A
// fallback is allowed while
//
//   reserve + deposits - withdrawals >= 1 credit
//
// where reserve = per_second * window, over the slices still in the
// window; hence, at every fallback:
//
//   fallbacks in the trailing window <= per_second * window
//                                       + fraction * reads admitted in it
//
// (the trailing window is the current slice and the kSlices - 1 before it,
// so it reaches between 0.9 and 1 window back). Over a long run the rate is
// at most per_second + fraction * the read rate. A failed primary is the only
// thing that spends it: speculative timer hedges never touch it, so hedges
// that spend every hedge credit cannot leave a dying replica's reads without
// their fallback. With per_second and fraction both 0 no fallback is taken.
//
// Credits are kept in fixed point (kUnitsPerCredit units per credit, the
// fraction and the reserve rounded down), so the bound holds exactly.
//
// Time is passed in (monotonic, hedge/clock.h); a call with a time earlier
// than one already seen counts in the newest slice.
//
// Thread safety: safe from any thread (one internal mutex, held for a few
// arithmetic steps).

#ifndef TAILGATE_HEDGE_POLICY_RETRY_BUDGET_H_
#define TAILGATE_HEDGE_POLICY_RETRY_BUDGET_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hedge/sync/mutex.h"

namespace tailgate::hedge {

struct RetryBudgetConfig {
  double fraction = 0.2;   // credit deposited per admitted read, in [0, 1]
  double per_second = 10;  // the floor: credits per second of window, in
                           // [0, 1e6]
  absl::Duration window = absl::Seconds(10);  // in [100ms, 1h]
};

inline constexpr double kMaxRetryPerSecond = 1e6;
inline constexpr absl::Duration kMinRetryWindow = absl::Milliseconds(100);
inline constexpr absl::Duration kMaxRetryWindow = absl::Hours(1);

// Checks the ranges above (NaN and infinity fail); the message names the bad
// field by its flag name: "retry_fraction must be in [0, 1], got 1.5".
absl::Status ValidateRetryBudgetConfig(const RetryBudgetConfig& config);

class RetryBudget {
 public:
  static constexpr int64_t kUnitsPerCredit = 1'000'000;
  static constexpr int kSlices = 10;

  // REQUIRES: ValidateRetryBudgetConfig(config).ok()
  explicit RetryBudget(const RetryBudgetConfig& config);

  RetryBudget(const RetryBudget&) = delete;
  RetryBudget& operator=(const RetryBudget&) = delete;

  // Deposits `fraction` for one admitted read.
  void OnAdmission(absl::Time now);

  // Takes one credit for a fallback. False (and nothing taken) when less
  // than one credit is left in the window, or the budget is disabled.
  bool TryConsume(absl::Time now);

  // The credits a fallback could take at `now`.
  double credits(absl::Time now) const;
  uint64_t admitted() const { return admitted_.load(); }
  uint64_t consumed() const { return consumed_.load(); }

 private:
  static constexpr int64_t kUnused = std::numeric_limits<int64_t>::min();
  struct Slice {
    int64_t index = kUnused;  // slice number since the epoch
    int64_t units = 0;        // deposits minus withdrawals
  };

  // Drops the slices that left the window at `now`; returns the current
  // slice.
  Slice& Advance(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const bool enabled_;
  const int64_t earn_units_;
  const int64_t reserve_units_;
  const absl::Duration slice_;

  // Moving the window on is bookkeeping, not a change of the balance, so
  // credits() may do it too.
  mutable Mutex mu_;
  mutable std::array<Slice, kSlices> slices_ ABSL_GUARDED_BY(mu_);
  mutable int64_t window_units_ ABSL_GUARDED_BY(mu_) = 0;  // sum of slices_
  mutable int64_t newest_ ABSL_GUARDED_BY(mu_) = 0;        // newest slice index

  std::atomic<uint64_t> admitted_{0};
  std::atomic<uint64_t> consumed_{0};
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_POLICY_RETRY_BUDGET_H_
