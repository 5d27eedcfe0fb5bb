#include "hedge/adaptive/censored_latency_sketch.h"

#include <cmath>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

using Sketch = CensoredLatencySketch;

const absl::Time kT0 = absl::UnixEpoch();

Sketch::Options FourSecondsInFour() { return {absl::Seconds(4), 4}; }

double Relative(absl::Duration got, absl::Duration want) {
  return std::abs(absl::FDivDuration(got, want) - 1.0);
}

TEST(CensoredLatencySketchTest, BucketCountCoversTheRange) {
  EXPECT_EQ(Sketch::kBuckets,
            1 + static_cast<int>(std::ceil(
                    std::log(absl::FDivDuration(Sketch::kMax, Sketch::kMin)) /
                    std::log(Sketch::kGamma))));
  EXPECT_GE(Sketch::UpperEdge(Sketch::kBuckets - 1), Sketch::kMax);
}

TEST(CensoredLatencySketchTest, RelativeErrorIsUnderTwoPercentInRange) {
  for (absl::Duration d = Sketch::kMin; d < Sketch::kMax; d = d * 1.013) {
    EXPECT_LE(Relative(Sketch::Midpoint(Sketch::BucketOf(d)), d),
              std::sqrt(Sketch::kGamma) - 1 + 1e-9)
        << d;
  }
}

TEST(CensoredLatencySketchTest, EdgesOfTheRangeClampToTheEndBuckets) {
  EXPECT_EQ(Sketch::BucketOf(absl::ZeroDuration()), 0);
  EXPECT_EQ(Sketch::BucketOf(Sketch::kMin - absl::Nanoseconds(1)), 0);
  EXPECT_EQ(Sketch::BucketOf(Sketch::kMin), 1);
  EXPECT_EQ(Sketch::BucketOf(Sketch::kMax), Sketch::kBuckets - 1);
  EXPECT_EQ(Sketch::BucketOf(absl::Hours(1)), Sketch::kBuckets - 1);
}

TEST(CensoredLatencySketchTest, EmptyHasNoQuantile) {
  Sketch sketch(FourSecondsInFour());
  EXPECT_FALSE(sketch.QuantileOf(0.5).has_value());
  EXPECT_FALSE(sketch.MedianRemaining(absl::Milliseconds(1)).has_value());
}

TEST(CensoredLatencySketchTest, CompleteSamplesGiveOrdinaryQuantiles) {
  Sketch sketch(FourSecondsInFour());
  for (int ms = 1; ms <= 100; ++ms) {
    sketch.AddComplete(kT0, absl::Milliseconds(ms));
  }
  EXPECT_LT(Relative(sketch.QuantileOf(0.5)->value, absl::Milliseconds(50)),
            0.03);
  EXPECT_LT(Relative(sketch.QuantileOf(0.9)->value, absl::Milliseconds(90)),
            0.03);
  EXPECT_FALSE(sketch.QuantileOf(0.9)->lower_bound);
  EXPECT_LT(Relative(sketch.QuantileOf(1.0)->value, absl::Milliseconds(100)),
            0.03);
}

// Half the samples are 10 ms; the other half were cut at 5 ms. Recorded
// as complete, the cut ones would make the median 5 ms. Censored, they
// leave the risk set at 5 ms having ended nothing, and the median is 10 ms.
TEST(CensoredLatencySketchTest, CensoredSamplesCountAsSlowerThanTheirCut) {
  Sketch sketch(FourSecondsInFour());
  for (int i = 0; i < 50; ++i) {
    sketch.AddComplete(kT0, absl::Milliseconds(10));
    sketch.AddCensored(kT0, absl::Milliseconds(5));
  }
  EXPECT_LT(Relative(sketch.QuantileOf(0.5)->value, absl::Milliseconds(10)),
            0.03);
  EXPECT_EQ(sketch.complete(), 50u);
  EXPECT_EQ(sketch.censored(), 50u);
}

TEST(CensoredLatencySketchTest, QuantileBeyondTheCensoredIsALowerBound) {
  Sketch sketch(FourSecondsInFour());
  for (int i = 0; i < 80; ++i) sketch.AddComplete(kT0, absl::Milliseconds(2));
  for (int i = 0; i < 20; ++i) sketch.AddCensored(kT0, absl::Milliseconds(7));
  const std::optional<Sketch::Quantile> p90 = sketch.QuantileOf(0.9);
  ASSERT_TRUE(p90.has_value());
  EXPECT_TRUE(p90->lower_bound);
  EXPECT_GE(p90->value, absl::Milliseconds(7));
  EXPECT_LT(p90->value, absl::Milliseconds(7.5));
  EXPECT_FALSE(sketch.QuantileOf(0.8)->lower_bound);
}

TEST(CensoredLatencySketchTest, OldSlotsLeaveTheWindow) {
  Sketch sketch(FourSecondsInFour());
  for (int i = 0; i < 10; ++i) sketch.AddComplete(kT0, absl::Milliseconds(50));
  sketch.AddComplete(kT0 + absl::Seconds(3.5), absl::Milliseconds(1));
  EXPECT_EQ(sketch.complete(), 11u);  // still within 4 slots
  sketch.AddComplete(kT0 + absl::Seconds(4), absl::Milliseconds(1));
  EXPECT_EQ(sketch.complete(), 2u);  // the first slot was reused
  EXPECT_LT(Relative(sketch.QuantileOf(1.0)->value, absl::Milliseconds(1)),
            0.03);
  // A long silence clears everything at once.
  sketch.AddCensored(kT0 + absl::Hours(2), absl::Milliseconds(3));
  EXPECT_EQ(sketch.complete(), 0u);
  EXPECT_EQ(sketch.censored(), 1u);
}

TEST(CensoredLatencySketchTest, AdvanceClearsWhatLeftTheWindowWithoutASample) {
  Sketch sketch(FourSecondsInFour());
  for (int i = 0; i < 10; ++i) sketch.AddComplete(kT0, absl::Milliseconds(50));
  sketch.AddCensored(kT0 + absl::Seconds(2), absl::Milliseconds(80));
  sketch.Advance(kT0 + absl::Seconds(3.5));  // nothing has left yet
  EXPECT_EQ(sketch.complete(), 10u);
  sketch.Advance(kT0 + absl::Seconds(4));  // the first slot has
  EXPECT_EQ(sketch.complete(), 0u);
  EXPECT_EQ(sketch.censored(), 1u);
  sketch.Advance(kT0 + absl::Seconds(6));
  EXPECT_EQ(sketch.censored(), 0u);
  EXPECT_FALSE(sketch.QuantileOf(0.5).has_value());
}

TEST(CensoredLatencySketchTest, MedianRemainingUsesTheSlowerSamplesOnly) {
  Sketch sketch(FourSecondsInFour());
  for (int i = 0; i < 80; ++i) sketch.AddComplete(kT0, absl::Milliseconds(2));
  for (int i = 0; i < 20; ++i) sketch.AddComplete(kT0, absl::Milliseconds(40));
  // Past 5 ms, only the 40 ms mode is left: about 35 ms to go.
  const std::optional<Sketch::Quantile> remaining =
      sketch.MedianRemaining(absl::Milliseconds(5));
  ASSERT_TRUE(remaining.has_value());
  EXPECT_FALSE(remaining->lower_bound);
  EXPECT_LT(Relative(remaining->value, absl::Milliseconds(35)), 0.05);
  EXPECT_FALSE(sketch.MedianRemaining(absl::Milliseconds(60)).has_value());
}

}  // namespace
}  // namespace tailgate::hedge
