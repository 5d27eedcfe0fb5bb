// What one arm of the chaos scenario did over time: the failure fallbacks
// the sidecar took and refused, read from its counters at a fixed interval
// while the reads run (FallbackSampler), and those with the failed reads
// and replica A's kills cut into fixed time buckets (BucketChaosRun), for
// the scenario's JSON lines and its plot (plots.h, ChaosTimeline).
//
// Every clock here counts from its own start (the sampler's construction,
// FlappingReplica::StartFlapping, the open loop's first scheduled send);
// the scenario starts them back to back, so they agree to within a
// millisecond, a hundredth of the 100 ms bucket.
//
// Example:
//   FallbackSampler sampler(
//       [&session] { return ReadFallbackCounts(session); }, kChaosBucket);
//   ... flap replica A, run the reads ...
//   absl::StatusOr<std::vector<FallbackSample>> samples = sampler.Stop();
//   ChaosTimeline timeline = BucketChaosRun("defaults", kChaosBucket,
//       reads.failure_times, *samples, flaps.kill_times, flaps.restart_times);
//
// Thread safety: a FallbackSampler's is PeriodicSampler's
// (periodic_sampler.h). BucketChaosRun and TimelineJson are pure.

#ifndef TAILGATE_EXPERIMENT_REPORT_CHAOS_TIMELINE_H_
#define TAILGATE_EXPERIMENT_REPORT_CHAOS_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "experiment/report/json_line.h"
#include "experiment/report/periodic_sampler.h"
#include "experiment/report/plots.h"

namespace tailgate::experiment {

// The chaos scenario's bucket: a fifth of the default 500 ms kill cycle.
inline constexpr absl::Duration kChaosBucket = absl::Milliseconds(100);

// The sidecar's totals since it started.
struct FallbackCounts {
  int64_t taken = 0;    // tailgate_attempts_total{kind="fallback"}
  int64_t refused = 0;  // tailgate_hedges_skipped_total{reason=
                        //   "no_retry_budget"}
};

using FallbackSample = TimedSample<FallbackCounts>;
// Samples once at construction, then at every multiple of the interval,
// and once more in Stop (periodic_sampler.h).
using FallbackSampler = PeriodicSampler<FallbackCounts>;

// The run in buckets of `bucket`, from 0 to the end of the bucket holding
// the last event (a failure, or a change of the counters between two
// samples), and at least to `duration`. A change between two samples
// counts in the bucket where the earlier sample was taken; a time below 0
// counts in bucket 0. REQUIRES: bucket > 0; samples ascending.
ChaosTimeline BucketChaosRun(std::string arm, absl::Duration bucket,
                             absl::Duration duration,
                             const std::vector<absl::Duration>& failure_times,
                             const std::vector<FallbackSample>& samples,
                             std::vector<absl::Duration> kills,
                             std::vector<absl::Duration> restarts);

// {"bucket_ms":100,"failed":[…],"fallbacks":[…],"refused":[…],
//  "kill_ms":[…],"restart_ms":[…]}: one count per bucket, times in whole
// milliseconds.
JsonObject TimelineJson(const ChaosTimeline& timeline);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_REPORT_CHAOS_TIMELINE_H_
