#include "experiment/measure/rss_sampler.h"

#include <unistd.h>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

TEST(RssSamplerTest, SamplesThisProcess) {
  RssSampler sampler(getpid(), absl::Milliseconds(5));
  // A hundred intervals: two samples however late the thread first runs.
  absl::SleepFor(absl::Milliseconds(500));
  absl::StatusOr<RssSeries> series = sampler.Stop();
  ASSERT_TRUE(series.ok()) << series.status();
  EXPECT_EQ(series->interval, absl::Milliseconds(5));
  // At least the first sample and one more; the count depends on the box.
  ASSERT_GE(series->kib.size(), 2u);
  EXPECT_GT(series->Min(), 0);
  EXPECT_LE(series->Min(), series->Max());
}

TEST(RssSamplerTest, AGoneProcessIsAnError) {
  RssSampler sampler(-1, absl::Milliseconds(5));
  EXPECT_FALSE(sampler.Stop().ok());
}

TEST(RssSamplerTest, StopTakesTheFirstSampleAndDoesNotWaitForTheNext) {
  const absl::Time start = absl::Now();
  RssSampler sampler(getpid(), absl::Hours(1));
  absl::StatusOr<RssSeries> series = sampler.Stop();
  ASSERT_TRUE(series.ok()) << series.status();
  // The sample taken at once, and no other: Stop ends the hour's wait.
  EXPECT_EQ(series->kib.size(), 1u);
  EXPECT_GT(series->kib[0], 0);
  EXPECT_LT(absl::Now() - start, absl::Minutes(1));
}

TEST(RssSamplerTest, DestructorStopsWithoutWaitingForTheNextSample) {
  const absl::Time start = absl::Now();
  { RssSampler sampler(getpid(), absl::Hours(1)); }
  // Had it not woken the sampling thread, the join would take an hour.
  EXPECT_LT(absl::Now() - start, absl::Minutes(1));
}

}  // namespace
}  // namespace tailgate::experiment
