#include "experiment/report/chaos_timeline.h"

#include <atomic>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kBucket = absl::Milliseconds(100);

absl::Duration Ms(int64_t ms) { return absl::Milliseconds(ms); }

std::vector<int64_t> Column(const ChaosTimeline& timeline,
                            int64_t ChaosTimeline::Bucket::*count) {
  std::vector<int64_t> column;
  for (const ChaosTimeline::Bucket& bucket : timeline.buckets) {
    column.push_back(bucket.*count);
  }
  return column;
}

TEST(BucketChaosRunTest, CountsEachEventInItsBucket) {
  const std::vector<FallbackSample> samples = {
      {Ms(1), {0, 0}},    // before any fallback
      {Ms(101), {2, 0}},  // two between 1 and 101 ms: bucket 0
      {Ms(203), {2, 0}},  // none
      {Ms(302), {5, 1}},  // from 203 ms: bucket 2
  };
  const ChaosTimeline timeline = BucketChaosRun(
      "defaults", kBucket, Ms(400), {Ms(-1), Ms(99), Ms(100), Ms(399)}, samples,
      {Ms(50), Ms(300)}, {Ms(80)});
  EXPECT_EQ(timeline.arm, "defaults");
  EXPECT_EQ(timeline.bucket, kBucket);
  EXPECT_EQ(Column(timeline, &ChaosTimeline::Bucket::failed),
            (std::vector<int64_t>{2, 1, 0, 1}));
  EXPECT_EQ(Column(timeline, &ChaosTimeline::Bucket::fallbacks),
            (std::vector<int64_t>{2, 0, 3, 0}));
  EXPECT_EQ(Column(timeline, &ChaosTimeline::Bucket::refused),
            (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_EQ(timeline.kills, (std::vector<absl::Duration>{Ms(50), Ms(300)}));
  EXPECT_EQ(timeline.restarts, std::vector<absl::Duration>{Ms(80)});
}

TEST(BucketChaosRunTest, CoversTheDurationAndEveryLaterEvent) {
  // 250 ms: three buckets, the last one partial.
  EXPECT_EQ(
      BucketChaosRun("a", kBucket, Ms(250), {}, {}, {}, {}).buckets.size(), 3u);
  EXPECT_EQ(
      BucketChaosRun("a", kBucket, Ms(300), {}, {}, {}, {}).buckets.size(), 3u);
  EXPECT_EQ(BucketChaosRun("a", kBucket, absl::ZeroDuration(), {}, {}, {}, {})
                .buckets.size(),
            1u);
  // A read that failed after the sends ended, a fallback found later still.
  const ChaosTimeline late = BucketChaosRun(
      "a", kBucket, Ms(200), {Ms(450)},
      {{Ms(0), {0, 0}}, {Ms(610), {0, 0}}, {Ms(720), {1, 0}}}, {}, {});
  EXPECT_EQ(Column(late, &ChaosTimeline::Bucket::failed),
            (std::vector<int64_t>{0, 0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(Column(late, &ChaosTimeline::Bucket::fallbacks),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 1}));
}

TEST(TimelineJsonTest, OneCountPerBucketAndWholeMilliseconds) {
  ChaosTimeline timeline{"defaults", kBucket};
  timeline.buckets = {{0, 1, 0}, {2, 0, 3}};
  timeline.kills = {absl::Microseconds(300400)};
  timeline.restarts = {absl::Microseconds(500600)};
  EXPECT_EQ(TimelineJson(timeline).ToString(),
            "{\"bucket_ms\":100.000,\"failed\":[0,2],\"fallbacks\":[1,0],"
            "\"refused\":[0,3],\"kill_ms\":[300],\"restart_ms\":[501]}");
}

TEST(FallbackSamplerTest, SamplesAtOnceAndWhenStopped) {
  std::atomic<int64_t> taken{0};
  FallbackSampler sampler(
      [&taken]() -> absl::StatusOr<FallbackCounts> {
        return FallbackCounts{taken.fetch_add(1), 7};
      },
      absl::Hours(1));
  absl::StatusOr<std::vector<FallbackSample>> samples = sampler.Stop();
  ASSERT_TRUE(samples.ok()) << samples.status();
  // The constructor's sample, then Stop's; none in between (an hour).
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_EQ((*samples)[0].value.taken, 0);
  EXPECT_EQ((*samples)[1].value.taken, 1);
  EXPECT_EQ((*samples)[1].value.refused, 7);
  EXPECT_LE((*samples)[0].at, (*samples)[1].at);
  EXPECT_GE((*samples)[0].at, absl::ZeroDuration());
}

TEST(FallbackSamplerTest, AFailedReadIsTheResult) {
  FallbackSampler sampler(
      []() -> absl::StatusOr<FallbackCounts> {
        return absl::UnavailableError("sidecar gone");
      },
      absl::Milliseconds(1));
  absl::StatusOr<std::vector<FallbackSample>> samples = sampler.Stop();
  ASSERT_FALSE(samples.ok());
  EXPECT_EQ(samples.status().message(), "sidecar gone");
}

}  // namespace
}  // namespace tailgate::experiment
