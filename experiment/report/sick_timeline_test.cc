#include "experiment/report/sick_timeline.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

absl::Duration Ms(int64_t ms) { return absl::Milliseconds(ms); }

ReadRecord Ok(int64_t scheduled_ms, int64_t latency_ms) {
  return {Ms(scheduled_ms), Ms(latency_ms), ""};
}

ReadRecord Failed(int64_t scheduled_ms, std::string error) {
  return {Ms(scheduled_ms), Ms(1000), std::move(error)};
}

CounterSample At(int64_t ms, std::vector<double> primaries, double attempts,
                 double requests) {
  return {Ms(ms), {std::move(primaries), attempts, requests}};
}

SickCaseShape Shape(int seconds, int replicas) {
  SickCaseShape shape;
  shape.seconds = seconds;
  shape.replicas = replicas;
  shape.deadline = absl::Seconds(3);
  return shape;
}

TEST(SummarizeSickCaseTest, ReadsGoToTheSecondTheyWereScheduledIn) {
  const std::vector<ReadRecord> reads = {
      Ok(0, 2), Failed(500, "DEADLINE_EXCEEDED"), Ok(1000, 4), Ok(1500, 1),
      Failed(2999, "http_504")};
  const std::vector<CounterSample> samples = {At(2, {0, 0}, 0, 0),
                                              At(3100, {3, 2}, 6, 5)};
  const SickCaseFigures figures =
      SummarizeSickCase(reads, samples, Shape(3, 2));
  EXPECT_EQ(figures.reads, 5);
  EXPECT_EQ(figures.failed, 2);
  EXPECT_EQ(figures.errors, (std::map<std::string, int64_t>{
                                {"DEADLINE_EXCEEDED", 1}, {"http_504", 1}}));
  ASSERT_EQ(figures.per_second.size(), 3u);
  EXPECT_EQ(figures.per_second[0].reads, 2);
  EXPECT_EQ(figures.per_second[0].failed, 1);
  EXPECT_EQ(figures.per_second[1].reads, 2);
  EXPECT_EQ(figures.per_second[1].failed, 0);
  EXPECT_EQ(figures.per_second[2].reads, 1);
  EXPECT_EQ(figures.per_second[2].failed, 1);
  // A failed read counts as the whole deadline, whenever it ended.
  EXPECT_EQ(figures.per_second[0].p99, absl::Seconds(3));
  EXPECT_EQ(figures.per_second[1].p99, Ms(4));
  EXPECT_EQ(figures.latency.samples, 5u);
  EXPECT_EQ(figures.latency.p50, Ms(4));
  EXPECT_EQ(figures.latency.max, absl::Seconds(3));
  EXPECT_DOUBLE_EQ(figures.attempts_per_read, 6.0 / 5.0);
}

TEST(SummarizeSickCaseTest, CounterChangesCountInTheEarlierSamplesSecond) {
  const std::vector<CounterSample> samples = {
      At(1, {0, 0}, 0, 0),
      At(1002, {2, 2}, 4, 4),    // second 0: even shares
      At(2001, {4, 2}, 7, 6),    // second 1: all to replica 0, 3 attempts
      At(3004, {6, 2}, 9, 8),    // second 2
      At(4500, {7, 3}, 12, 10),  // after the last second: into second 2
  };
  const SickCaseFigures figures = SummarizeSickCase({}, samples, Shape(3, 2));
  ASSERT_EQ(figures.per_second.size(), 3u);
  EXPECT_EQ(figures.per_second[0].primary_shares,
            (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(figures.per_second[1].primary_shares,
            (std::vector<double>{1.0, 0.0}));
  EXPECT_EQ(figures.per_second[2].primary_shares,
            (std::vector<double>{0.75, 0.25}));
  EXPECT_EQ(figures.per_second[0].attempts, 4);
  EXPECT_EQ(figures.per_second[1].attempts, 3);
  EXPECT_EQ(figures.per_second[2].attempts, 5);
  EXPECT_FALSE(figures.per_second[0].p99.has_value());
  EXPECT_EQ(figures.reads, 0);
  EXPECT_EQ(figures.latency.samples, 0u);
  EXPECT_DOUBLE_EQ(figures.attempts_per_read, 12.0 / 10.0);
}

TEST(SummarizeSickCaseTest, NoPrimariesNoShares) {
  const std::vector<CounterSample> samples = {At(0, {1, 1}, 2, 2),
                                              At(2000, {1, 1}, 2, 2)};
  const SickCaseFigures figures = SummarizeSickCase({}, samples, Shape(2, 2));
  EXPECT_TRUE(figures.per_second[0].primary_shares.empty());
  EXPECT_TRUE(std::isnan(figures.attempts_per_read));
}

TEST(SummarizeSickCaseTest, LastTenSecondsFromTheSampleAtSecondsMinusTen) {
  std::vector<CounterSample> samples;
  // 20 s: 3 attempts per read for the first 8 s, then 1.
  double attempts = 0, requests = 0;
  for (int t = 0; t <= 20; ++t) {
    samples.push_back(At(t * 1000 + 3, {requests, 0}, attempts, requests));
    attempts += t < 8 ? 30 : 10;
    requests += 10;
  }
  const SickCaseFigures figures = SummarizeSickCase({}, samples, Shape(20, 2));
  EXPECT_DOUBLE_EQ(figures.attempts_per_read_last10s, 1.0);
  EXPECT_DOUBLE_EQ(figures.attempts_per_read, (8 * 30 + 12 * 10) / 200.0);
  // Shorter than 10 s: the whole case.
  const std::vector<CounterSample> short_case = {At(0, {0, 0}, 0, 0),
                                                 At(3000, {2, 0}, 4, 2)};
  EXPECT_DOUBLE_EQ(
      SummarizeSickCase({}, short_case, Shape(3, 2)).attempts_per_read_last10s,
      2.0);
}

TEST(SummarizeSickCaseTest, FirstFastPrimaryAfterTheHeal) {
  // 3 replicas: the healed one needs 1/6 of a second's primaries.
  std::vector<CounterSample> samples;
  std::vector<double> primaries = {0, 0, 0};
  for (int t = 0; t <= 16; ++t) {
    samples.push_back(At(t * 1000 + 2, primaries, 0, 0));
    primaries[0] += 10;
    primaries[1] += 10;
    // Nothing until second 13; 1 of 21 in 13 (under 1/6), 4 of 24 in 14.
    primaries[2] += t < 13 ? 0 : t == 13 ? 1 : 4;
  }
  SickCaseShape shape = Shape(16, 3);
  shape.heal_at = absl::Seconds(10);
  EXPECT_EQ(SummarizeSickCase({}, samples, shape).first_fast_primary_s, 4);
  shape.heal_at.reset();
  EXPECT_FALSE(
      SummarizeSickCase({}, samples, shape).first_fast_primary_s.has_value());
  primaries = {0, 0, 0};
  std::vector<CounterSample> never = {At(0, primaries, 0, 0),
                                      At(16000, {5, 5, 0}, 0, 0)};
  shape.heal_at = absl::Seconds(10);
  EXPECT_FALSE(
      SummarizeSickCase({}, never, shape).first_fast_primary_s.has_value());
}

TEST(AddSickCaseFieldsTest, TheLineFields) {
  const std::vector<ReadRecord> reads = {Ok(0, 2), Failed(1200, "timeout")};
  const std::vector<CounterSample> samples = {
      At(1, {0, 0}, 0, 0), At(1001, {1, 0}, 1, 1), At(2500, {1, 1}, 3, 2)};
  JsonObject line;
  AddSickCaseFields(SummarizeSickCase(reads, samples, Shape(2, 2)), line);
  EXPECT_EQ(line.ToString(),
            "{\"reads\":2,\"failed\":1,\"errors\":{\"timeout\":1},"
            "\"p50_ms\":2.000,\"p99_ms\":3000.000,\"max_ms\":3000.000,"
            "\"attempts_per_read\":1.500,"
            "\"attempts_per_read_last10s\":1.500,"
            "\"first_fast_primary_s\":null,\"per_second\":["
            "{\"t\":0,\"reads\":1,\"failed\":0,\"p99_ms\":2.000,"
            "\"primaries\":[1.000,0.000],\"attempts\":1},"
            "{\"t\":1,\"reads\":1,\"failed\":1,\"p99_ms\":3000.000,"
            "\"primaries\":[0.000,1.000],\"attempts\":2}]}");
}

}  // namespace
}  // namespace tailgate::experiment
