#include "experiment/report/plots.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

// A fresh directory under the test's temporary directory.
std::string PlotDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir =
      (std::filesystem::path(tmp == nullptr ? "/tmp" : tmp) / name).string();
  std::filesystem::remove_all(dir);
  return dir;
}

bool NonEmptyFile(const std::string& dir, const std::string& file) {
  std::error_code error;
  return std::filesystem::file_size(std::filesystem::path(dir) / file, error) >
             0 &&
         !error;
}

LatencySummary P99Of(absl::Duration p99) {
  LatencySummary summary;
  summary.samples = 1000;
  summary.p50 = summary.p95 = summary.p99 = summary.p999 = summary.max = p99;
  return summary;
}

TEST(PlotsTest, PrepareCreatesTheDirectory) {
  const std::string dir = PlotDir("made/here");
  ASSERT_TRUE(PreparePlotDir(dir).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir));
}

TEST(PlotsTest, PrepareRefusesAQuoteNamingTheFlag) {
  const absl::Status status = PreparePlotDir(PlotDir("it's"));
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StartsWith(status.message(), "--plot_dir: "));
}

TEST(PlotsTest, LatencyCdf) {
  const std::string dir = PlotDir("cdf");
  ASSERT_TRUE(PreparePlotDir(dir).ok());
  std::vector<absl::Duration> fast, slow;
  for (int i = 1; i <= 100; ++i) {
    fast.push_back(absl::Microseconds(2000 + i));
    slow.push_back(absl::Microseconds(i < 80 ? 2000 + i : 41000 + i));
  }
  const absl::Status status = PlotLatencyCdf(
      dir, "seed", "test", {{"baseline", slow}, {"hedged", fast}});
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(NonEmptyFile(dir, "seed_cdf.png"));
  EXPECT_TRUE(NonEmptyFile(dir, "seed_cdf.gp"));
  EXPECT_TRUE(NonEmptyFile(dir, "seed_cdf_baseline.dat"));
}

TEST(PlotsTest, SweepLeavesOutWhatCannotBeDrawn) {
  const std::string dir = PlotDir("sweep");
  ASSERT_TRUE(PreparePlotDir(dir).ok());
  // Hedged never has a p99 that holds (every point lost over 1 % of its
  // reads) and never an ok read: gnuplot must not be asked to draw it.
  const std::vector<SweepPoint> points = {
      {"baseline", 500, 500, 1000, 1000, P99Of(absl::Milliseconds(41)), 1.0},
      {"baseline", 8000, 300, 16000, 600, P99Of(absl::Seconds(2)), 1.0},
      {"hedged", 500, 0, 1000, 0, LatencySummary(), NAN},
      {"hedged", 8000, 0, 16000, 0, LatencySummary(), NAN},
  };
  const absl::Status status = PlotSweep(dir, points);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(NonEmptyFile(dir, "open_loop_p99.png"));
  EXPECT_TRUE(NonEmptyFile(dir, "open_loop_amplification.png"));
  EXPECT_TRUE(NonEmptyFile(dir, "open_loop_goodput.png"));
  EXPECT_TRUE(NonEmptyFile(dir, "open_loop_sweep_hedged.dat"));
}

std::string ReadFile(const std::string& dir, const std::string& file) {
  std::ifstream in(std::filesystem::path(dir) / file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PlotsTest, ChaosTimelineOnePanelPerArm) {
  const std::string dir = PlotDir("chaos");
  ASSERT_TRUE(PreparePlotDir(dir).ok());
  ChaosTimeline defaults{"defaults", absl::Milliseconds(100)};
  defaults.buckets = {{0, 0, 0}, {0, 3, 0}, {0, 0, 0}};
  defaults.kills = {absl::Milliseconds(100)};
  defaults.restarts = {absl::Milliseconds(200)};
  // Every count 0 and a kill with no restart: still drawn.
  ChaosTimeline quiet{"no_retry_budget", absl::Milliseconds(100)};
  quiet.buckets = {{0, 0, 0}, {2, 0, 3}};
  quiet.kills = {absl::Milliseconds(150)};
  const absl::Status status = PlotChaosTimeline(dir, "test", {defaults, quiet});
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(NonEmptyFile(dir, "chaos_timeline.png"));
  EXPECT_EQ(ReadFile(dir, "chaos_timeline_defaults.dat"),
            "# start_s middle_s failed_reads fallbacks_taken "
            "fallbacks_refused\n"
            "0.000 0.050 0 0 0\n0.100 0.150 0 3 0\n0.200 0.250 0 0 0\n"
            "0.300 0.350 0 0 0\n");
  const std::string script = ReadFile(dir, "chaos_timeline.gp");
  EXPECT_TRUE(absl::StrContains(script, "layout 2,1")) << script;
  EXPECT_TRUE(absl::StrContains(
      script, "rect from first 0.100, graph 0 to first 0.200, graph 1"))
      << script;
  EXPECT_TRUE(absl::StrContains(
      script, "rect from first 0.150, graph 0 to graph 1, graph 1"))
      << script;
  EXPECT_TRUE(absl::StrContains(
      script, "no_retry_budget: 2 failed reads, 0 fallbacks taken, 3 refused"))
      << script;
}

}  // namespace
}  // namespace tailgate::experiment
