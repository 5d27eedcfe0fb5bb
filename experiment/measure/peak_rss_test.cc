#include "experiment/measure/peak_rss.h"

#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

TEST(PeakRssTest, GrowsWithWhatThisProcessTouched) {
  const absl::StatusOr<int64_t> before = PeakRssKib(getpid());
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GT(*before, 0);
  std::string touched(64 << 20, 'x');  // 64 MiB, every page written
  const absl::StatusOr<int64_t> after = PeakRssKib(getpid());
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_GE(*after, *before + (60 << 10)) << touched.back();
}

TEST(PeakRssTest, ResidentIsAtMostThePeak) {
  const absl::StatusOr<int64_t> resident = ResidentKib(getpid());
  ASSERT_TRUE(resident.ok()) << resident.status();
  EXPECT_GT(*resident, 0);
  const absl::StatusOr<int64_t> peak = PeakRssKib(getpid());
  ASSERT_TRUE(peak.ok()) << peak.status();
  EXPECT_LE(*resident, *peak);
}

TEST(PeakRssTest, NoSuchProcess) {
  EXPECT_FALSE(PeakRssKib(-1).ok());
  EXPECT_FALSE(ResidentKib(-1).ok());
}

}  // namespace
}  // namespace tailgate::experiment
