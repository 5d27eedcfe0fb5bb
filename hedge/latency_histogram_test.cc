#include "hedge/latency_histogram.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

TEST(LatencyHistogramTest, BoundsAscend) {
  const auto bounds = LatencyHistogram::BoundsSeconds();
  ASSERT_EQ(bounds.size(), LatencyHistogram::kBounds);
  for (size_t i = 1; i < bounds.size(); ++i)
    EXPECT_LT(bounds[i - 1], bounds[i]);
  EXPECT_LE(bounds.front(), 0.001);  // resolves 1 ms
  EXPECT_GE(bounds.back(), 1.0);     // and 1 s
}

TEST(LatencyHistogramTest, BoundaryValueFallsInItsBucket) {
  LatencyHistogram histogram;
  histogram.Record(absl::Milliseconds(1));     // == bound 0.001 -> bucket 1
  histogram.Record(absl::Microseconds(1001));  // just above -> bucket 2
  histogram.Record(absl::Seconds(10));         // above every bound -> +Inf
  const HistogramSnapshot s = histogram.Snapshot();
  ASSERT_EQ(s.counts.size(), LatencyHistogram::kBounds + 1);
  EXPECT_EQ(s.counts[1], 1u);
  EXPECT_EQ(s.counts[2], 1u);
  EXPECT_EQ(s.counts.back(), 1u);
  EXPECT_EQ(s.count, 3u);
  EXPECT_NEAR(s.sum_seconds, 10.002001, 1e-9);
}

TEST(LatencyHistogramTest, ConcurrentRecordsAreAllCounted) {
  LatencyHistogram histogram;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&histogram, t] {
      for (int i = 0; i < 10000; ++i) histogram.Record(absl::Milliseconds(t));
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(histogram.Snapshot().count, 40000u);
}

}  // namespace
}  // namespace tailgate::hedge
