#include "experiment/measure/latency_split.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

SequentialRead Read(int client_us, int sidecar_us, bool hedged) {
  return {absl::Microseconds(client_us), absl::Microseconds(sidecar_us),
          hedged};
}

TEST(LatencySplitTest, HedgedReadsAndEveryRoundTrip) {
  const std::vector<SequentialRead> reads = {
      Read(2600, 2300, false), Read(7600, 7250, true), Read(2700, 2350, false),
      Read(8100, 7400, true)};
  const LatencySplit split = SplitLatencies(reads);
  EXPECT_EQ(split.hedged.samples, 2u);
  EXPECT_EQ(split.hedged.p50, absl::Microseconds(7600));
  EXPECT_EQ(split.hedged.max, absl::Microseconds(8100));
  EXPECT_EQ(split.hedged_sidecar.samples, 2u);
  EXPECT_EQ(split.hedged_sidecar.p50, absl::Microseconds(7250));
  EXPECT_EQ(split.hedged_sidecar.max, absl::Microseconds(7400));
  // Round trips 300, 350, 350, 700 (sorted): p50 is the 2nd.
  EXPECT_EQ(split.grpc_round_trip.samples, 4u);
  EXPECT_EQ(split.grpc_round_trip.p50, absl::Microseconds(350));
  EXPECT_EQ(split.grpc_round_trip.max, absl::Microseconds(700));
}

TEST(LatencySplitTest, SidecarLongerThanClientCountsZero) {
  const std::vector<SequentialRead> reads = {Read(2000, 2100, false)};
  EXPECT_EQ(SplitLatencies(reads).grpc_round_trip.max, absl::ZeroDuration());
}

TEST(LatencySplitTest, NoHedgedReadPrintsNulls) {
  const std::vector<SequentialRead> reads = {Read(3000, 2500, false)};
  JsonObject line;
  AddLatencySplitFields(SplitLatencies(reads), line);
  const std::string text = line.ToString();
  EXPECT_NE(text.find("\"hedged_p99_ms\":null"), std::string::npos) << text;
  EXPECT_NE(text.find("\"hedged_samples\":0"), std::string::npos) << text;
  EXPECT_NE(text.find("\"hedged_sidecar_samples\":0"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\"grpc_round_trip_max_ms\":0.500"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\"grpc_round_trip_samples\":1"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace tailgate::experiment
