#include "experiment/load/h2load.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Testdata(const std::string& name) {
  std::ifstream file("experiment/load/testdata/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(H2loadReportTest, ParsesARealGrpcRun) {
  const std::string text = Testdata("h2load_grpc_report.txt");
  ASSERT_FALSE(text.empty());
  absl::StatusOr<H2loadReport> report = ParseH2loadReport(text);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->done, 15471);
  EXPECT_EQ(report->succeeded, 15471);
  EXPECT_EQ(report->failed, 0);
  EXPECT_EQ(report->non_2xx, 0);
  EXPECT_DOUBLE_EQ(report->reads_per_second, 3867.75);
  EXPECT_EQ(report->mean_latency, absl::Microseconds(32760));
}

TEST(H2loadReportTest, CountsFailuresAndOtherStatuses) {
  const std::string text =
      "finished in 1.00s, 10.00 req/s, 1KB/s\n"
      "requests: 12 total, 12 started, 10 done, 6 succeeded, 2 failed, "
      "1 errored, 1 timeout\n"
      "status codes: 6 2xx, 1 3xx, 2 4xx, 1 5xx\n"
      "time for request:      1.5s      2.5s      2.00s      1ms    50%\n";
  absl::StatusOr<H2loadReport> report = ParseH2loadReport(text);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->failed, 4);
  EXPECT_EQ(report->non_2xx, 4);
  EXPECT_EQ(report->mean_latency, absl::Seconds(2));
}

TEST(H2loadReportTest, AReportCutShortIsAnError) {
  EXPECT_THAT(std::string(ParseH2loadReport("starting benchmark...\n")
                              .status()
                              .message()),
              HasSubstr("'finished in' line"));
  const std::string no_latency =
      "finished in 1.00s, 10.00 req/s, 1KB/s\n"
      "requests: 10 total, 10 started, 10 done, 10 succeeded, 0 failed, "
      "0 errored, 0 timeout\n"
      "status codes: 10 2xx, 0 3xx, 0 4xx, 0 5xx\n";
  EXPECT_THAT(std::string(ParseH2loadReport(no_latency).status().message()),
              HasSubstr("'time for request' line"));
}

TEST(H2loadArgsTest, PacesPerConnectionAndFramesGrpc) {
  H2loadRun run;
  run.url = "http://127.0.0.1:1/tailgate.v1.HedgedRead/Read";
  run.grpc = true;
  run.grpc_body_file = "read.bin";
  run.connections = 8;
  run.total_rate = 4000;
  run.duration = absl::Seconds(5);
  EXPECT_THAT(H2loadArgs(run),
              ElementsAre("h2load", "-t", "1", "-c8", "-m1", "-D5",
                          "--rps=500", "-d", "read.bin", "-H",
                          "content-type: application/grpc", "-H",
                          "te: trailers", run.url));
}

TEST(H2loadArgsTest, UnpacedHttp1) {
  H2loadRun run;
  run.url = "http://127.0.0.1:1/v.txt";
  run.connections = 32;
  run.duration = absl::Seconds(2);
  EXPECT_THAT(H2loadArgs(run), ElementsAre("h2load", "-t", "1", "-c32", "-m1",
                                           "-D2", "--h1", run.url));
}

}  // namespace
}  // namespace tailgate::experiment
