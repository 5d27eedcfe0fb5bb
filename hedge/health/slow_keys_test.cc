#include "hedge/health/slow_keys.h"

#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

constexpr absl::Duration kWindow = absl::Seconds(10);
const absl::Time kStart = absl::FromUnixSeconds(1000);

// A replica that answers other reads all along: its last answer is always
// just before the loss.
class Answering {
 public:
  explicit Answering(SlowKeys& keys) : keys_(keys) {}
  bool NoteLoss(size_t replica, uint64_t key, absl::Time now) {
    return keys_.NoteLoss(replica, key, now, now - absl::Nanoseconds(1));
  }

 private:
  SlowKeys& keys_;
};

TEST(SlowKeysTest, AKeyCountsOncePerWindowOnItsReplica) {
  SlowKeys slow(kWindow);
  Answering keys(slow);
  EXPECT_TRUE(keys.NoteLoss(0, 42, kStart));
  EXPECT_FALSE(keys.NoteLoss(0, 42, kStart + absl::Seconds(1)));
  EXPECT_FALSE(keys.NoteLoss(0, 42, kStart + kWindow - absl::Nanoseconds(1)));
  // The window is over: it counts again, and a new window starts.
  EXPECT_TRUE(keys.NoteLoss(0, 42, kStart + kWindow));
  EXPECT_FALSE(keys.NoteLoss(0, 42, kStart + kWindow + absl::Seconds(9)));
}

TEST(SlowKeysTest, OtherKeysAndOtherReplicasAreNews) {
  SlowKeys slow(kWindow);
  Answering keys(slow);
  EXPECT_TRUE(keys.NoteLoss(0, 42, kStart));
  EXPECT_TRUE(keys.NoteLoss(0, 43, kStart));  // another key: a hang
  EXPECT_TRUE(keys.NoteLoss(1, 42, kStart));  // the key slow elsewhere too
  EXPECT_FALSE(keys.NoteLoss(1, 42, kStart + absl::Milliseconds(1)));
}

TEST(SlowKeysTest, AReplicaThatAnswersNothingIsBlamedForEachLoss) {
  SlowKeys keys(kWindow);
  const absl::Time never = absl::InfinitePast();
  EXPECT_TRUE(keys.NoteLoss(0, 42, kStart, never));
  EXPECT_TRUE(keys.NoteLoss(0, 42, kStart + absl::Seconds(1), never));
  // An answer before the last counted loss does not make the next neutral.
  EXPECT_TRUE(keys.NoteLoss(0, 42, kStart + absl::Seconds(2),
                            kStart + absl::Milliseconds(500)));
  // One after it does.
  EXPECT_FALSE(keys.NoteLoss(0, 42, kStart + absl::Seconds(3),
                             kStart + absl::Milliseconds(2500)));
}

TEST(SlowKeysTest, NoKeyIsAlwaysNews) {
  SlowKeys slow(kWindow);
  Answering keys(slow);
  EXPECT_TRUE(keys.NoteLoss(0, 0, kStart));
  EXPECT_TRUE(keys.NoteLoss(0, 0, kStart + absl::Milliseconds(1)));
}

TEST(SlowKeysTest, APairPushedOutByNewerOnesCountsAgain) {
  SlowKeys slow(kWindow);
  Answering keys(slow);
  const absl::Time later = kStart + absl::Milliseconds(1);
  EXPECT_TRUE(keys.NoteLoss(0, 1, kStart));
  for (uint64_t key = 2; key <= SlowKeys::kCapacity; ++key) {
    EXPECT_TRUE(keys.NoteLoss(0, key, kStart));
  }
  EXPECT_FALSE(keys.NoteLoss(0, 1, later));  // still held: 64 pairs
  EXPECT_TRUE(keys.NoteLoss(0, SlowKeys::kCapacity + 1, later));
  EXPECT_TRUE(keys.NoteLoss(0, 1, later));  // pushed out by the 65th
}

}  // namespace
}  // namespace tailgate::hedge
