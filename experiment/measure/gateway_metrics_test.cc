#include "experiment/measure/gateway_metrics.h"

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

TEST(GatewayMetricsTest, ReadsRequestsAndAttempts) {
  absl::StatusOr<GatewayCounters> counters = ParseGatewayMetrics(
      "{\"requests\":120,\"rejected\":0,\"attempts\":131,\"hedges\":11,"
      "\"hedge_wins\":3,\"timeouts\":0,\"backend_failures\":0,"
      "\"in_flight\":1}\n");
  ASSERT_TRUE(counters.ok()) << counters.status();
  EXPECT_EQ(counters->requests, 120u);
  EXPECT_EQ(counters->attempts, 131u);
}

TEST(GatewayMetricsTest, SpacesAroundTheColon) {
  absl::StatusOr<GatewayCounters> counters =
      ParseGatewayMetrics("{ \"attempts\" : 7, \"requests\" :\n5 }");
  ASSERT_TRUE(counters.ok()) << counters.status();
  EXPECT_EQ(counters->requests, 5u);
  EXPECT_EQ(counters->attempts, 7u);
}

TEST(GatewayMetricsTest, MissingOrBadCountersAreErrors) {
  EXPECT_FALSE(ParseGatewayMetrics("{\"requests\":1}").ok());
  EXPECT_FALSE(ParseGatewayMetrics("{\"requests\":-1,\"attempts\":1}").ok());
  EXPECT_FALSE(ParseGatewayMetrics("{\"requests\":\"x\",\"attempts\":1}").ok());
  EXPECT_FALSE(ParseGatewayMetrics("").ok());
}

}  // namespace
}  // namespace tailgate::experiment
