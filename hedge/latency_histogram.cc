#include "hedge/latency_histogram.h"

#include <algorithm>

namespace tailgate::hedge {
namespace {

constexpr std::array<double, LatencyHistogram::kBounds> kBoundsSeconds = {
    0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025,
    0.035,  0.05,  0.075, 0.1,   0.15,  0.25,   0.5,  0.75,  1.0,  2.5};

}  // namespace

absl::Span<const double> LatencyHistogram::BoundsSeconds() {
  return kBoundsSeconds;
}

void LatencyHistogram::Record(absl::Duration latency) {
  const double seconds = absl::ToDoubleSeconds(latency);
  const size_t bucket =
      std::lower_bound(kBoundsSeconds.begin(), kBoundsSeconds.end(), seconds) -
      kBoundsSeconds.begin();
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  const int64_t nanos = absl::ToInt64Nanoseconds(latency);
  sum_nanos_.fetch_add(nanos > 0 ? nanos : 0, std::memory_order_relaxed);
}

HistogramSnapshot LatencyHistogram::Snapshot() const {
  HistogramSnapshot snapshot;
  snapshot.bounds_seconds = kBoundsSeconds;
  snapshot.counts.reserve(counts_.size());
  for (const auto& count : counts_) {
    const uint64_t n = count.load(std::memory_order_relaxed);
    snapshot.counts.push_back(n);
    snapshot.count += n;
  }
  snapshot.sum_seconds =
      static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) * 1e-9;
  return snapshot;
}

}  // namespace tailgate::hedge
