#include "experiment/config/fanout_keys.h"

#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

TEST(FanoutKeysTest, ABatchHasDistinctKeysTheSameInEveryArm) {
  const std::vector<uint64_t> keys = FanoutBatchKeys(3, 1000);
  EXPECT_EQ(keys.size(), 1000u);
  EXPECT_EQ(std::set<uint64_t>(keys.begin(), keys.end()).size(), 1000u);
  for (uint64_t key : keys) EXPECT_LT(key, kFanoutKeySpace);
  EXPECT_EQ(FanoutBatchKeys(3, 1000), keys);
  EXPECT_NE(FanoutBatchKeys(4, 1000), keys);
}

TEST(FanoutKeysTest, AboutTwoKeysInAHundredHaveASlowReplica) {
  int with_slow_replica = 0;
  for (uint64_t batch = 0; batch < 100; ++batch) {
    for (uint64_t id : FanoutBatchKeys(batch, 1000)) {
      with_slow_replica += id % 100 == 0 || id % 100 == 50;
    }
  }
  // 2000 expected of 100 000; the standard deviation is about 44.
  EXPECT_NEAR(with_slow_replica, 2000, 250);
}

TEST(FanoutKeysTest, ZipfKeysFavourTheFirstKeys) {
  ZipfKeys zipf(1000, 1.1, 5);
  std::vector<int> counts(1000);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t key = zipf.Next();
    ASSERT_LT(key, 1000u);
    ++counts[key];
  }
  // P(0) = 1 / H(1000, 1.1), about 0.19; P(1) = P(0) / 2^1.1.
  EXPECT_NEAR(counts[0], 19000, 1500);
  EXPECT_NEAR(static_cast<double>(counts[1]) / counts[0], 0.466, 0.05);
  EXPECT_GT(counts[0], counts[9] * 10);
}

}  // namespace
}  // namespace tailgate::experiment
