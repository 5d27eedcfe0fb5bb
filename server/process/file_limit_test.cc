#include "server/process/file_limit.h"

#include <sys/resource.h>

#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

TEST(FileLimitTest, RaisesTheSoftLimitToTheHardOne) {
  rlimit original{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &original), 0);
  if (original.rlim_max == RLIM_INFINITY || original.rlim_max < 64) {
    GTEST_SKIP() << "needs a finite hard limit of at least 64";
  }
  rlimit lowered = original;
  lowered.rlim_cur = 32;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);

  absl::StatusOr<FileLimit> raised = RaiseFileLimit();
  ASSERT_TRUE(raised.ok()) << raised.status();
  EXPECT_EQ(raised->before, 32u);
  EXPECT_EQ(raised->soft, original.rlim_max);
  EXPECT_EQ(raised->hard, original.rlim_max);
  rlimit now{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(now.rlim_cur, original.rlim_max);

  // Already at the hard limit: nothing changes.
  absl::StatusOr<FileLimit> again = RaiseFileLimit();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->before, again->soft);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &original), 0);
}

}  // namespace
}  // namespace tailgate::server
