#include "experiment/report/report.h"

#include <cmath>

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

TEST(ReportTest, MetricsCountTheMeasuredPhaseOnly) {
  SidecarStats before;
  before.requests = 50;
  before.attempts = 50;
  SidecarStats after;
  after.requests = 2050;
  after.attempts = 2466;
  after.hedges = 416;
  after.hedge_wins = 400;
  after.in_flight = 0;
  const SidecarStats delta = StatsDelta(before, after);
  EXPECT_EQ(delta.requests, 2000u);
  EXPECT_EQ(delta.attempts, 2416u);
  EXPECT_DOUBLE_EQ(AttemptsPerRequest(delta), 1.208);
  EXPECT_EQ(MetricsJson(delta).ToString(),
            "{\"requests\":2000,\"rejected\":0,\"attempts\":2416,"
            "\"hedges\":416,\"hedge_wins\":400,\"timeouts\":0,"
            "\"backend_failures\":0,\"in_flight\":0}");
}

TEST(ReportTest, NoRequestsHaveNoAmplification) {
  EXPECT_TRUE(std::isnan(AttemptsPerRequest(SidecarStats())));
}

TEST(ReportTest, LatencyFields) {
  LatencySummary summary;
  summary.samples = 3;
  summary.p50 = absl::Microseconds(2500);
  summary.p95 = summary.p99 = summary.p999 = summary.max =
      absl::Milliseconds(41);
  JsonObject line;
  AddLatencyFields(summary, line);
  EXPECT_EQ(line.ToString(),
            "{\"p50_ms\":2.500,\"p95_ms\":41.000,\"p99_ms\":41.000,"
            "\"p999_ms\":41.000,\"max_ms\":41.000,\"samples\":3}");

  JsonObject empty;
  AddLatencyFields(LatencySummary(), empty);
  EXPECT_EQ(empty.ToString(),
            "{\"p50_ms\":null,\"p95_ms\":null,\"p99_ms\":null,"
            "\"p999_ms\":null,\"max_ms\":null,\"samples\":0}");
}

TEST(ReportTest, PrefixedLatencyFields) {
  LatencySummary summary;
  summary.samples = 1;
  summary.p50 = summary.p95 = summary.p99 = summary.p999 = summary.max =
      absl::Microseconds(120);
  JsonObject line;
  AddLatencyFields(summary, line, "rejected_");
  EXPECT_EQ(line.ToString(),
            "{\"rejected_p50_ms\":0.120,\"rejected_p95_ms\":0.120,"
            "\"rejected_p99_ms\":0.120,\"rejected_p999_ms\":0.120,"
            "\"rejected_max_ms\":0.120,\"rejected_samples\":1}");
}

}  // namespace
}  // namespace tailgate::experiment
