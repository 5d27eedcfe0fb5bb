#include "experiment/report/percentiles.h"

#include <cassert>

namespace tailgate::experiment {

size_t NearestRankIndex(size_t n, int64_t per_100k) {
  assert(n > 0 && per_100k > 0 && per_100k <= kP100);
  // rank = ceil(n * per_100k / 100000), in [1, n].
  const uint64_t product = static_cast<uint64_t>(n) * per_100k;
  const uint64_t rank = (product + kP100 - 1) / kP100;
  return static_cast<size_t>(rank - 1);
}

absl::Duration NearestRank(absl::Span<const absl::Duration> sorted,
                           int64_t per_100k) {
  return sorted[NearestRankIndex(sorted.size(), per_100k)];
}

LatencySummary Summarize(absl::Span<const absl::Duration> sorted) {
  LatencySummary summary;
  summary.samples = sorted.size();
  if (sorted.empty()) return summary;
  summary.p50 = NearestRank(sorted, kP50);
  summary.p95 = NearestRank(sorted, kP95);
  summary.p99 = NearestRank(sorted, kP99);
  summary.p999 = NearestRank(sorted, kP999);
  summary.max = sorted.back();
  return summary;
}

}  // namespace tailgate::experiment
