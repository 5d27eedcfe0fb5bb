// Percentiles by the nearest-rank method, and the latency summary every
// experiment line reports (p50, p95, p99, p99.9, max, sample count).
//
// Definition (nearest rank, no interpolation): the p-th percentile of n
// samples is the smallest sample x such that at least p % of the samples
// are <= x, i.e. the sample of rank ceil(p / 100 * n) in ascending order,
// rank 1 being the smallest. Every reported percentile is therefore a
// latency that was actually observed. What that means in practice:
//   1 sample      every percentile is that sample;
//   100 samples   p50 is the 50th smallest, p99 the 99th (one sample is
//                 worse), p99.9 the largest;
//   500 samples   p99 is the 495th smallest: 5 samples are worse;
//   2000 samples  p99 is the 1980th smallest: the 20 samples above it are
//                 the worst 1 %; p99.9 is the 1998th (2 samples above it).
// The rank is computed in integers, with the percentile given in parts per
// 100000 (p99.9 = 99900), so no floating-point product such as 0.99 * 2000
// can land on the wrong side of an integer.
//
// Example:
//   std::vector<absl::Duration> latencies = ...;
//   std::sort(latencies.begin(), latencies.end());
//   LatencySummary summary = Summarize(latencies);
//
// Thread safety: pure functions.

#ifndef TAILGATE_EXPERIMENT_REPORT_PERCENTILES_H_
#define TAILGATE_EXPERIMENT_REPORT_PERCENTILES_H_

#include <cstddef>
#include <cstdint>

#include "absl/time/time.h"
#include "absl/types/span.h"

namespace tailgate::experiment {

// Percentiles in parts per 100000.
inline constexpr int64_t kP50 = 50000;
inline constexpr int64_t kP95 = 95000;
inline constexpr int64_t kP99 = 99000;
inline constexpr int64_t kP999 = 99900;
inline constexpr int64_t kP100 = 100000;

// The 0-based index, in ascending order, of the nearest-rank percentile.
// REQUIRES: n > 0; 0 < per_100k <= kP100.
size_t NearestRankIndex(size_t n, int64_t per_100k);

// REQUIRES: `sorted` is ascending and not empty; 0 < per_100k <= kP100.
absl::Duration NearestRank(absl::Span<const absl::Duration> sorted,
                           int64_t per_100k);

struct LatencySummary {
  size_t samples = 0;  // 0: no sample, every percentile below is zero
  absl::Duration p50;
  absl::Duration p95;
  absl::Duration p99;
  absl::Duration p999;
  absl::Duration max;
};

// REQUIRES: `sorted` is ascending (it may be empty).
LatencySummary Summarize(absl::Span<const absl::Duration> sorted);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_REPORT_PERCENTILES_H_
