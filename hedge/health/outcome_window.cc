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

int64_t OutcomeWindow::total(absl::Time now) const {
  const int64_t current = SliceIndex(now);
  int64_t sum = 0;
  for (const Slice& slice : slices_) {
    if (InWindow(slice, current)) sum += slice.total;
  }
  return sum;
}

int64_t OutcomeWindow::failures(absl::Time now) const {
  const int64_t current = SliceIndex(now);
  int64_t sum = 0;
  for (const Slice& slice : slices_) {
    if (InWindow(slice, current)) sum += slice.failures;
  }
  return sum;
}

double OutcomeWindow::failure_rate(absl::Time now) const {
  const int64_t all = total(now);
  return all == 0 ? 0.0 : static_cast<double>(failures(now)) / all;
}

}  // namespace tailgate::hedge
