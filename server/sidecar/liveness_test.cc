#include "server/sidecar/liveness.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'000'000);
const absl::Status kProbeFailed =
    absl::UnavailableError("the door did not answer the health check");

TEST(LivenessTest, LiveWhenTheProbeAnswersWithOrWithoutReads) {
  EXPECT_TRUE(CheckLiveness(absl::OkStatus(), absl::InfinitePast(), kNow).ok());
  EXPECT_TRUE(CheckLiveness(absl::OkStatus(), kNow, kNow).ok());
}

// New clients locked out (the probe fails) while reads are answered: a
// restart would not help, so still live, up to the window's edge.
TEST(LivenessTest, AFailedProbeWithReadsAnsweredWithinTheWindowIsLive) {
  EXPECT_TRUE(CheckLiveness(kProbeFailed, kNow, kNow).ok());
  EXPECT_TRUE(CheckLiveness(kProbeFailed, kNow - kServingWindow, kNow).ok());
}

TEST(LivenessTest, AFailedProbeWithNoReadAnsweredInTheWindowIsNotLive) {
  const absl::Status late = CheckLiveness(
      kProbeFailed, kNow - kServingWindow - absl::Milliseconds(1), kNow);
  EXPECT_EQ(late.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(late.message().find("did not answer the health check"),
            absl::string_view::npos)
      << late;
  EXPECT_NE(late.message().find("no read answered in the last 3s"),
            absl::string_view::npos)
      << late;
  EXPECT_FALSE(CheckLiveness(kProbeFailed, absl::InfinitePast(), kNow).ok());
}

}  // namespace
}  // namespace tailgate::server
