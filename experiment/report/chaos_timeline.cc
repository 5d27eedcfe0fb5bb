#include "experiment/report/chaos_timeline.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <utility>

namespace tailgate::experiment {
namespace {

// The bucket holding `at`.
size_t BucketOf(absl::Duration at, absl::Duration bucket) {
  if (at <= absl::ZeroDuration()) return 0;
  return static_cast<size_t>(absl::IDivDuration(at, bucket, &at));
}

std::vector<int64_t> Millis(const std::vector<absl::Duration>& times) {
  std::vector<int64_t> millis;
  millis.reserve(times.size());
  for (absl::Duration at : times) {
    millis.push_back(std::llround(absl::ToDoubleMilliseconds(at)));
  }
  return millis;
}

}  // namespace

ChaosTimeline BucketChaosRun(std::string arm, absl::Duration bucket,
                             absl::Duration duration,
                             const std::vector<absl::Duration>& failure_times,
                             const std::vector<FallbackSample>& samples,
                             std::vector<absl::Duration> kills,
                             std::vector<absl::Duration> restarts) {
  assert(bucket > absl::ZeroDuration());
  ChaosTimeline timeline;
  timeline.arm = std::move(arm);
  timeline.bucket = bucket;
  timeline.kills = std::move(kills);
  timeline.restarts = std::move(restarts);
  // Whole buckets up to `duration`, more if an event comes later.
  absl::Duration rest;
  const int64_t whole = absl::IDivDuration(
      std::max(duration, absl::ZeroDuration()), bucket, &rest);
  timeline.buckets.resize(
      std::max<size_t>(1, whole + (rest > absl::ZeroDuration() ? 1 : 0)));
  auto grow_to_hold = [&timeline](size_t index) {
    if (timeline.buckets.size() <= index) timeline.buckets.resize(index + 1);
    return index;
  };
  for (absl::Duration at : failure_times) {
    ++timeline.buckets[grow_to_hold(BucketOf(at, bucket))].failed;
  }
  for (size_t i = 1; i < samples.size(); ++i) {
    const FallbackCounts& before = samples[i - 1].value;
    const FallbackCounts& after = samples[i].value;
    if (after.taken == before.taken && after.refused == before.refused) {
      continue;
    }
    ChaosTimeline::Bucket& into =
        timeline.buckets[grow_to_hold(BucketOf(samples[i - 1].at, bucket))];
    into.fallbacks += after.taken - before.taken;
    into.refused += after.refused - before.refused;
  }
  return timeline;
}

JsonObject TimelineJson(const ChaosTimeline& timeline) {
  std::vector<int64_t> failed, fallbacks, refused;
  for (const ChaosTimeline::Bucket& bucket : timeline.buckets) {
    failed.push_back(bucket.failed);
    fallbacks.push_back(bucket.fallbacks);
    refused.push_back(bucket.refused);
  }
  JsonObject json;
  json.AddMillis("bucket_ms", timeline.bucket)
      .AddIntList("failed", failed)
      .AddIntList("fallbacks", fallbacks)
      .AddIntList("refused", refused)
      .AddIntList("kill_ms", Millis(timeline.kills))
      .AddIntList("restart_ms", Millis(timeline.restarts));
  return json;
}

}  // namespace tailgate::experiment
