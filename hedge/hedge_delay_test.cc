#include "hedge/hedge_delay.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

TEST(FixedHedgeDelayTest, UsesItsDelayUnlessTheCallerChose) {
  FixedHedgeDelay policy(absl::Milliseconds(25));
  EXPECT_EQ(policy.DelayFor(std::nullopt), absl::Milliseconds(25));
  EXPECT_EQ(policy.DelayFor(absl::Milliseconds(5)), absl::Milliseconds(5));
}

TEST(FixedHedgeDelayTest, IgnoresObservedLatency) {
  FixedHedgeDelay policy(absl::Milliseconds(25));
  HedgeDelayPolicy& base = policy;
  base.ObservePrimary(absl::UnixEpoch(), absl::Milliseconds(1),
                      HedgeDelayPolicy::PrimaryEnd::kAnswered);
  EXPECT_EQ(policy.DelayFor(std::nullopt), absl::Milliseconds(25));
  EXPECT_EQ(base.MedianRemaining(absl::Milliseconds(1)), std::nullopt);
}

}  // namespace
}  // namespace tailgate::hedge
