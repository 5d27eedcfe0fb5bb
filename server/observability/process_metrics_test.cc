#include "server/observability/process_metrics.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"

namespace tailgate::server {
namespace {

// This process's own figures: within what the test can check from outside.
TEST(ProcessMetricsTest, ReadsThisProcess) {
  // Spend some CPU so that it shows.
  const absl::Time until = absl::Now() + absl::Milliseconds(50);
  volatile uint64_t spin = 0;
  while (absl::Now() < until) spin = spin + 1;

  absl::StatusOr<ProcessStats> stats = ReadProcessStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_GT(stats->cpu_seconds, 0.0);
  EXPECT_LT(stats->cpu_seconds, 3600.0);
  EXPECT_GT(stats->resident_bytes, 1 << 20);  // a gtest binary: over 1 MiB
  EXPECT_GE(stats->virtual_bytes, stats->resident_bytes);
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  EXPECT_LE(stats->start_time_seconds, now + 1);
  EXPECT_GT(stats->start_time_seconds, now - 600);  // started by this test run
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_cur == RLIM_INFINITY) {
    EXPECT_TRUE(std::isinf(stats->max_fds));
  } else {
    EXPECT_EQ(stats->max_fds, static_cast<double>(files.rlim_cur));
  }
  EXPECT_GE(stats->open_fds, 3.0);  // stdin, stdout, stderr at least
}

TEST(ProcessMetricsTest, OpenFdsCountsEachDescriptor) {
  absl::StatusOr<ProcessStats> before = ReadProcessStats();
  ASSERT_TRUE(before.ok()) << before.status();
  const int fd = open("/dev/null", O_RDONLY);
  ASSERT_GE(fd, 0);
  absl::StatusOr<ProcessStats> during = ReadProcessStats();
  close(fd);
  ASSERT_TRUE(during.ok()) << during.status();
  EXPECT_EQ(during->open_fds, before->open_fds + 1);
}

// A /proc of the test's own making: every field where proc(5) puts it.
class FakeProcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    root_ =
        absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/fake_proc_", getpid());
    mkdir(root_.c_str(), 0755);
    mkdir((root_ + "/self").c_str(), 0755);
    mkdir((root_ + "/self/fd").c_str(), 0755);
    for (const char* fd : {"0", "1", "2", "7"}) {
      std::ofstream(root_ + "/self/fd/" + fd) << "";
    }
    std::ofstream(root_ + "/stat") << "cpu  1 2 3 4\nbtime 1700000000\n";
    files_ = {root_ + "/self", root_ + "/stat"};
  }

  // A stat line whose command has spaces and parentheses in it.
  void WriteStat(long utime, long stime, long start, long vsize, long rss) {
    std::ofstream(root_ + "/self/stat")
        << "4242 (odd ) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 " << utime
        << " " << stime << " 0 0 20 0 9 0 " << start << " " << vsize << " "
        << rss << " 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 1 0 0\n";
  }
  void WriteLimits(const std::string& soft) {
    std::ofstream(root_ + "/self/limits")
        << "Limit                     Soft Limit           Hard Limit"
           "           Units     \n"
        << "Max cpu time              unlimited            unlimited"
           "            seconds   \n"
        << "Max open files            " << soft
        << "                 524288               files     \n";
  }

  std::string root_;
  ProcFiles files_;
};

TEST_F(FakeProcTest, FieldsAreReadWhereProcPutsThem) {
  const long ticks = sysconf(_SC_CLK_TCK);
  const long page = sysconf(_SC_PAGESIZE);
  WriteStat(3 * ticks, ticks / 2, 100 * ticks, 123456789, 1000);
  WriteLimits("1024");
  absl::StatusOr<ProcessStats> stats = ReadProcessStats(files_);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_DOUBLE_EQ(stats->cpu_seconds, 3.5);
  EXPECT_DOUBLE_EQ(stats->resident_bytes, 1000.0 * page);
  EXPECT_DOUBLE_EQ(stats->virtual_bytes, 123456789);
  EXPECT_DOUBLE_EQ(stats->start_time_seconds, 1700000100);
  EXPECT_DOUBLE_EQ(stats->max_fds, 1024);
  EXPECT_DOUBLE_EQ(stats->open_fds, 4);  // another process's: all counted
}

TEST_F(FakeProcTest, UnlimitedFilesAreInfinite) {
  WriteStat(0, 0, 0, 0, 0);
  WriteLimits("unlimited");
  absl::StatusOr<ProcessStats> stats = ReadProcessStats(files_);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(std::isinf(stats->max_fds));
}

TEST_F(FakeProcTest, AShortStatLineIsAnErrorNamingTheFile) {
  std::ofstream(root_ + "/self/stat") << "4242 (x) S 1 2 3\n";
  WriteLimits("1024");
  absl::StatusOr<ProcessStats> stats = ReadProcessStats(files_);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find(root_ + "/self/stat"),
            std::string::npos)
      << stats.status();
}

TEST(ProcessFamiliesTest, OneSampleEachInTheTextFormat) {
  ProcessStats stats;
  stats.cpu_seconds = 1.25;
  stats.resident_bytes = 4096;
  stats.virtual_bytes = 8192;
  stats.start_time_seconds = 1700000100;
  stats.open_fds = 9;
  stats.max_fds = 1024;
  const std::string text =
      prometheus::TextSerializer().Serialize(ProcessFamilies(stats));
  for (const char* line : {"# TYPE process_cpu_seconds_total counter\n",
                           "process_cpu_seconds_total 1.25\n",
                           "process_resident_memory_bytes 4096\n",
                           "process_virtual_memory_bytes 8192\n",
                           "process_start_time_seconds 1700000100\n",
                           "process_open_fds 9\n", "process_max_fds 1024\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "in:\n" << text;
  }
}

}  // namespace
}  // namespace tailgate::server
