#include "experiment/workload.h"

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

constexpr ReplicaName kA = ReplicaName::kA;
constexpr ReplicaName kB = ReplicaName::kB;

TEST(WorkloadTest, SeedMixSlowsOneReplicaPerStraggler) {
  EXPECT_EQ(ReadDelay(StragglerMix::kSeed, kA, 0), kSlowDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeed, kB, 0), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeed, kA, 1), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeed, kB, 1), kSlowDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeed, kA, 2), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeed, kB, 2), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeed, kA, 1990), kSlowDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeed, kB, 1991), kSlowDelay);
}

TEST(WorkloadTest, SeedMixMeetsASlowPrimaryOneReadInFive) {
  // Primaries alternate A, B, A, ...: read N's primary is N % 2.
  int slow_primaries = 0;
  int slow_alternates = 0;
  for (uint64_t id = 0; id < 1000; ++id) {
    const ReplicaName primary = id % 2 == 0 ? kA : kB;
    const ReplicaName alternate = id % 2 == 0 ? kB : kA;
    slow_primaries += ReadDelay(StragglerMix::kSeed, primary, id) == kSlowDelay;
    slow_alternates +=
        ReadDelay(StragglerMix::kSeed, alternate, id) == kSlowDelay;
  }
  EXPECT_EQ(slow_primaries, 200);
  EXPECT_EQ(slow_alternates, 0);
}

TEST(WorkloadTest, CorrelatedMixSlowsBothReplicas) {
  EXPECT_EQ(ReadDelay(StragglerMix::kCorrelated, kA, 10), kSlowDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kCorrelated, kB, 10), kSlowDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kCorrelated, kA, 11), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kCorrelated, kB, 11), kFastDelay);
}

TEST(WorkloadTest, NoMixNeverWaits) {
  EXPECT_EQ(ReadDelay(StragglerMix::kNone, kA, 0), absl::ZeroDuration());
  EXPECT_EQ(DelayForTarget(StragglerMix::kNone, kB, WarmupPath(3)),
            absl::ZeroDuration());
}

TEST(WorkloadTest, TargetsAreParsed) {
  EXPECT_EQ(ReadPath(42), "/read?id=42");
  EXPECT_EQ(DelayForTarget(StragglerMix::kSeed, kB, ReadPath(21)), kSlowDelay);
  EXPECT_EQ(DelayForTarget(StragglerMix::kSeed, kA, WarmupPath(0)), kFastDelay);
  EXPECT_EQ(DelayForTarget(StragglerMix::kSeed, kA, "/read?id="), std::nullopt);
  EXPECT_EQ(DelayForTarget(StragglerMix::kSeed, kA, "/read?id=1x"),
            std::nullopt);
  EXPECT_EQ(DelayForTarget(StragglerMix::kSeed, kA, "/read?id=+1"),
            std::nullopt);
  EXPECT_EQ(DelayForTarget(StragglerMix::kSeed, kA, "/other"), std::nullopt);
}

}  // namespace
}  // namespace tailgate::experiment
