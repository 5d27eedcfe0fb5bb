// OutcomeWindow: how many attempts of one replica ended, and how many of
// them failed, over a sliding window of time.
//
// The window is kSlices slices of window/kSlices each; an outcome counts in
// the slice of its `now`, and a slice leaves the window when time has moved
// kSlices slices past it. So the counts cover between window - slice and
// window of the most recent time seen. A time earlier than one already seen
// counts in the newest slice.
//
// Thread safety: not thread-safe; its owner (CircuitBreaker) locks around it.

#ifndef TAILGATE_HEDGE_HEALTH_OUTCOME_WINDOW_H_
#define TAILGATE_HEDGE_HEALTH_OUTCOME_WINDOW_H_

#include <array>
#include <cstdint>
#include <limits>

#include "absl/time/time.h"

namespace tailgate::hedge {

class OutcomeWindow {
 public:
  static constexpr int kSlices = 10;

  // REQUIRES: window > 0 and finite.
  explicit OutcomeWindow(absl::Duration window);

  void Add(absl::Time now, bool failed);
  void Clear();

  // Counts in the window as of `now` (slices that have left it excluded).
  int64_t total(absl::Time now) const;
  int64_t failures(absl::Time now) const;
  // failures / total, or 0 with no outcome.
  double failure_rate(absl::Time now) const;

 private:
  static constexpr int64_t kUnused = std::numeric_limits<int64_t>::min();
  struct Slice {
    int64_t index = kUnused;  // slice number since the epoch
    int64_t total = 0;
    int64_t failures = 0;
  };
  struct Counts {
    int64_t total = 0;
    int64_t failures = 0;
  };
  Counts Sum(absl::Time now) const;
  int64_t SliceIndex(absl::Time now) const;
  bool InWindow(const Slice& slice, int64_t current) const {
    return slice.index != kUnused && current - slice.index < kSlices;
  }

  const absl::Duration slice_;
  std::array<Slice, kSlices> slices_;
  int64_t newest_ = kUnused;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_HEALTH_OUTCOME_WINDOW_H_
