#include "experiment/measure/prometheus_text.h"

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

constexpr char kText[] =
    "# HELP tailgate_attempts_total Upstream attempts launched.\n"
    "# TYPE tailgate_attempts_total counter\n"
    "tailgate_attempts_total{replica=\"http://a\",kind=\"primary\"} 10\n"
    "tailgate_attempts_total{replica=\"http://a\",kind=\"fallback\"} 2\n"
    "tailgate_attempts_total{replica=\"http://b\",kind=\"fallback\"} 3\n"
    "tailgate_attempts_total_extra{kind=\"fallback\"} 100\n"
    "tailgate_hedges_total 7 1700000000000\n"
    "tailgate_label_with_space{why=\"a } b\"} 4\n"
    "tailgate_broken{kind=\"fallback\"} not-a-number\n";

TEST(PrometheusTextTest, SumsTheMatchingSamplesOfExactlyThatName) {
  EXPECT_EQ(SumSamples(kText, "tailgate_attempts_total", "kind=\"fallback\""),
            5);
  EXPECT_EQ(SumSamples(kText, "tailgate_attempts_total"), 15);
  EXPECT_EQ(
      SumSamples(kText, "tailgate_attempts_total", "replica=\"http://a\""), 12);
}

TEST(PrometheusTextTest, EveryLabelMustMatchInAnyOrder) {
  EXPECT_EQ(SumSamplesWithLabels(kText, "tailgate_attempts_total",
                                 {"kind=\"primary\"", "replica=\"http://a\""}),
            10);
  EXPECT_EQ(SumSamplesWithLabels(kText, "tailgate_attempts_total",
                                 {"replica=\"http://b\"", "kind=\"primary\""}),
            0);
  EXPECT_EQ(SumSamplesWithLabels(kText, "tailgate_attempts_total", {}), 15);
}

TEST(PrometheusTextTest, UnlabelledSampleWithTimestamp) {
  EXPECT_EQ(SumSamples(kText, "tailgate_hedges_total"), 7);
  EXPECT_EQ(SumSamples(kText, "tailgate_hedges_total", "kind=\"x\""), 0);
}

TEST(PrometheusTextTest, LabelValuesWithSpacesAndBadValues) {
  EXPECT_EQ(SumSamples(kText, "tailgate_label_with_space"), 4);
  EXPECT_EQ(SumSamples(kText, "tailgate_broken"), 0);
  EXPECT_EQ(SumSamples(kText, "tailgate_missing"), 0);
  EXPECT_EQ(SumSamples("", "tailgate_attempts_total"), 0);
}

}  // namespace
}  // namespace tailgate::experiment
