// LatencyHistogram: a fixed-bucket, lock-free latency histogram.
//
// Buckets resolve 0.5 ms to 2.5 s, dense around hedge delays (1-50 ms).
// Record() is a few relaxed atomic increments, cheap enough for the engine
// loop; Snapshot() may be read concurrently and is consistent per bucket
// (not across buckets), which is what a Prometheus scrape expects.
//
// Thread safety: safe from any thread.

#ifndef TAILGATE_HEDGE_LATENCY_HISTOGRAM_H_
#define TAILGATE_HEDGE_LATENCY_HISTOGRAM_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"

namespace tailgate::hedge {

struct HistogramSnapshot {
  // Upper bounds in seconds, ascending; the implicit last bucket is +Inf.
  absl::Span<const double> bounds_seconds;
  // counts[i]: observations <= bounds_seconds[i] and > the previous bound;
  // counts.back(): above the last bound. Not cumulative.
  std::vector<uint64_t> counts;
  uint64_t count = 0;
  double sum_seconds = 0;
};

class LatencyHistogram {
 public:
  static constexpr size_t kBounds = 20;
  static absl::Span<const double> BoundsSeconds();

  LatencyHistogram() = default;
  LatencyHistogram(const LatencyHistogram&) = delete;
  LatencyHistogram& operator=(const LatencyHistogram&) = delete;

  void Record(absl::Duration latency);
  HistogramSnapshot Snapshot() const;

 private:
  std::array<std::atomic<uint64_t>, kBounds + 1> counts_{};
  std::atomic<uint64_t> sum_nanos_{0};
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_LATENCY_HISTOGRAM_H_
