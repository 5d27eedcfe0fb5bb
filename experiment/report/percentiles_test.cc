#include "experiment/report/percentiles.h"

#include <vector>

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

// 1 ms, 2 ms, ..., n ms: the sample of rank r is r ms.
std::vector<absl::Duration> Ramp(int n) {
  std::vector<absl::Duration> samples;
  for (int i = 1; i <= n; ++i) samples.push_back(absl::Milliseconds(i));
  return samples;
}

TEST(NearestRankTest, OneSampleIsEveryPercentile) {
  const std::vector<absl::Duration> one = {absl::Milliseconds(7)};
  const LatencySummary summary = Summarize(one);
  EXPECT_EQ(summary.samples, 1u);
  EXPECT_EQ(summary.p50, absl::Milliseconds(7));
  EXPECT_EQ(summary.p95, absl::Milliseconds(7));
  EXPECT_EQ(summary.p99, absl::Milliseconds(7));
  EXPECT_EQ(summary.p999, absl::Milliseconds(7));
  EXPECT_EQ(summary.max, absl::Milliseconds(7));
}

TEST(NearestRankTest, HundredSamples) {
  const LatencySummary summary = Summarize(Ramp(100));
  EXPECT_EQ(summary.p50, absl::Milliseconds(50));
  EXPECT_EQ(summary.p95, absl::Milliseconds(95));
  EXPECT_EQ(summary.p99, absl::Milliseconds(99));  // one sample is worse
  EXPECT_EQ(summary.p999, absl::Milliseconds(100));
  EXPECT_EQ(summary.max, absl::Milliseconds(100));
}

TEST(NearestRankTest, P99OfTwoThousandLeavesTheWorstTwentyAboveIt) {
  const std::vector<absl::Duration> samples = Ramp(2000);
  const absl::Duration p99 = NearestRank(samples, kP99);
  EXPECT_EQ(p99, absl::Milliseconds(1980));
  int worse = 0;
  for (absl::Duration sample : samples) worse += sample > p99;
  EXPECT_EQ(worse, 20);
  EXPECT_EQ(NearestRank(samples, kP999), absl::Milliseconds(1998));
}

TEST(NearestRankTest, FiveHundredSamplesLeaveFiveAboveP99) {
  EXPECT_EQ(NearestRankIndex(500, kP99), 494u);
}

TEST(NearestRankTest, RankRoundsUp) {
  // p50 of 3 is the 2nd (ceil 1.5); p50 of 2 is the 1st (exactly 1).
  EXPECT_EQ(NearestRankIndex(3, kP50), 1u);
  EXPECT_EQ(NearestRankIndex(2, kP50), 0u);
  // Smallest positive percentile is the smallest sample; 100 % the largest.
  EXPECT_EQ(NearestRankIndex(2000, 1), 0u);
  EXPECT_EQ(NearestRankIndex(2000, kP100), 1999u);
}

TEST(NearestRankTest, TiesAreReportedAsTheObservedValue) {
  const std::vector<absl::Duration> samples = {
      absl::Milliseconds(2), absl::Milliseconds(2), absl::Milliseconds(2),
      absl::Milliseconds(40)};
  const LatencySummary summary = Summarize(samples);
  EXPECT_EQ(summary.p50, absl::Milliseconds(2));
  EXPECT_EQ(summary.p95, absl::Milliseconds(40));
}

TEST(NearestRankTest, NoSamplesIsAnEmptySummary) {
  const LatencySummary summary = Summarize({});
  EXPECT_EQ(summary.samples, 0u);
  EXPECT_EQ(summary.max, absl::ZeroDuration());
}

}  // namespace
}  // namespace tailgate::experiment
