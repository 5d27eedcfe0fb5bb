#include "hedge/health/outcome_window.h"

#include <algorithm>

namespace tailgate::hedge {

OutcomeWindow::OutcomeWindow(absl::Duration window)
    : slice_(window / kSlices) {}

int64_t OutcomeWindow::SliceIndex(absl::Time now) const {
  absl::Duration remainder;
  const int64_t index =
      absl::IDivDuration(now - absl::UnixEpoch(), slice_, &remainder);
  return newest_ == kUnused ? index : std::max(index, newest_);
}

void OutcomeWindow::Add(absl::Time now, bool failed) {
  const int64_t index = SliceIndex(now);
  newest_ = index;
  Slice& slice = slices_[static_cast<size_t>(index % kSlices)];
  if (slice.index != index) slice = Slice{index, 0, 0};
  ++slice.total;
  if (failed) ++slice.failures;
}

void OutcomeWindow::Clear() {
  slices_.fill(Slice{});
  newest_ = kUnused;
}

OutcomeWindow::Counts OutcomeWindow::Sum(absl::Time now) const {
  const int64_t current = SliceIndex(now);
  Counts sum;
  for (const Slice& slice : slices_) {
    if (!InWindow(slice, current)) continue;
    sum.total += slice.total;
    sum.failures += slice.failures;
  }
  return sum;
}

int64_t OutcomeWindow::total(absl::Time now) const { return Sum(now).total; }

int64_t OutcomeWindow::failures(absl::Time now) const {
  return Sum(now).failures;
}

double OutcomeWindow::failure_rate(absl::Time now) const {
  const Counts sum = Sum(now);
  return sum.total == 0 ? 0.0 : static_cast<double>(sum.failures) / sum.total;
}

}  // namespace tailgate::hedge
