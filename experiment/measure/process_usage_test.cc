#include "experiment/measure/process_usage.h"

#include <unistd.h>

#include <thread>

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

TEST(ProcessUsageTest, ReadsThisProcess) {
  absl::StatusOr<ProcessUsage> before = ReadProcessUsage(getpid());
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GT(before->rss_kib, 0);
  EXPECT_GT(before->rss_file_kib, 0);
  EXPECT_GT(before->rss_anon_kib, 0);

  // A second thread shows in the count; CPU time never goes backwards.
  std::thread other([] {
    absl::StatusOr<ProcessUsage> during = ReadProcessUsage(getpid());
    ASSERT_TRUE(during.ok());
    EXPECT_GE(during->threads, 2);
  });
  other.join();
  volatile uint64_t spin = 0;
  for (int i = 0; i < 50'000'000; ++i) spin = spin + i;
  absl::StatusOr<ProcessUsage> after = ReadProcessUsage(getpid());
  ASSERT_TRUE(after.ok());
  EXPECT_GE(after->cpu, before->cpu);
}

TEST(ProcessUsageTest, AProcessThatIsGoneIsAnError) {
  // Pid numbers above pid_max (at most 2^22) are never assigned.
  EXPECT_FALSE(ReadProcessUsage(1 << 23).ok());
}

}  // namespace
}  // namespace tailgate::experiment
