#include "hedge/health/slow_keys.h"

#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

constexpr absl::Duration kWindow = absl::Seconds(10);
const absl::Time kStart = absl::FromUnixSeconds(1000);

TEST(SlowKeysTest, AKeyCountsOncePerWindowOnItsReplica) {
  SlowKeys keys(kWindow);
  EXPECT_TRUE(keys.NoteLoss(0, 42, kStart));
  EXPECT_FALSE(keys.NoteLoss(0, 42, kStart + absl::Seconds(1)));
  EXPECT_FALSE(keys.NoteLoss(0, 42, kStart + kWindow - absl::Nanoseconds(1)));
  // The window is over: it counts again, and a new window starts.
  EXPECT_TRUE(keys.NoteLoss(0, 42, kStart + kWindow));
  EXPECT_FALSE(keys.NoteLoss(0, 42, kStart + kWindow + absl::Seconds(9)));
}

TEST(SlowKeysTest, OtherKeysAndOtherReplicasAreNews) {
  SlowKeys keys(kWindow);
  EXPECT_TRUE(keys.NoteLoss(0, 42, kStart));
  EXPECT_TRUE(keys.NoteLoss(0, 43, kStart));  // another key: a hang
  EXPECT_TRUE(keys.NoteLoss(1, 42, kStart));  // the key slow elsewhere too
  EXPECT_FALSE(keys.NoteLoss(1, 42, kStart));
}

TEST(SlowKeysTest, NoKeyIsAlwaysNews) {
  SlowKeys keys(kWindow);
  EXPECT_TRUE(keys.NoteLoss(0, 0, kStart));
  EXPECT_TRUE(keys.NoteLoss(0, 0, kStart));
}

TEST(SlowKeysTest, APairPushedOutByNewerOnesCountsAgain) {
  SlowKeys keys(kWindow);
  EXPECT_TRUE(keys.NoteLoss(0, 1, kStart));
  for (uint64_t key = 2; key <= SlowKeys::kCapacity; ++key) {
    EXPECT_TRUE(keys.NoteLoss(0, key, kStart));
  }
  EXPECT_FALSE(keys.NoteLoss(0, 1, kStart));  // still held: 64 pairs
  EXPECT_TRUE(keys.NoteLoss(0, SlowKeys::kCapacity + 1, kStart));
  EXPECT_TRUE(keys.NoteLoss(0, 1, kStart));  // pushed out by the 65th
}

}  // namespace
}  // namespace tailgate::hedge
