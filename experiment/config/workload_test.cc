#include "experiment/config/workload.h"

#include <random>

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

// Reads among `ids` whose primary (as `primary_of` picks it) is slow under
// `mix`, those whose alternate is, and those where both are.
struct SlowCounts {
  int primaries = 0;
  int alternates = 0;
  int both = 0;
};

template <typename PrimaryOf>
SlowCounts CountSlow(StragglerMix mix, uint64_t ids, PrimaryOf primary_of) {
  SlowCounts counts;
  for (uint64_t id = 0; id < ids; ++id) {
    const ReplicaName primary = primary_of(id);
    const ReplicaName alternate = primary == kA ? kB : kA;
    const bool slow_primary = ReadDelay(mix, primary, id) == kSlowDelay;
    const bool slow_alternate = ReadDelay(mix, alternate, id) == kSlowDelay;
    counts.primaries += slow_primary;
    counts.alternates += slow_alternate;
    counts.both += slow_primary && slow_alternate;
  }
  return counts;
}

TEST(WorkloadTest, SeedMixMeetsASlowPrimaryOneReadInFive) {
  // Primaries alternate A, B, A, ...: read N's primary is N % 2.
  const SlowCounts counts = CountSlow(
      StragglerMix::kSeed, 1000, [](uint64_t id) { return id % 2 ? kB : kA; });
  EXPECT_EQ(counts.primaries, 200);
  EXPECT_EQ(counts.alternates, 0);
  EXPECT_EQ(counts.both, 0);
}

TEST(WorkloadTest, SeedMixMeetsNoSlowPrimaryWhenTheRotationIsShifted) {
  // Even reads on B: what one refused read does to the open loop's
  // rotation. Why kSeedAnyPhase exists.
  const SlowCounts counts = CountSlow(
      StragglerMix::kSeed, 1000, [](uint64_t id) { return id % 2 ? kA : kB; });
  EXPECT_EQ(counts.primaries, 0);
}

TEST(WorkloadTest, AnyPhaseMixMeetsASlowPrimaryOneReadInFiveInEitherPhase) {
  const SlowCounts a_first =
      CountSlow(StragglerMix::kSeedAnyPhase, 1000,
                [](uint64_t id) { return id % 2 ? kB : kA; });
  const SlowCounts b_first =
      CountSlow(StragglerMix::kSeedAnyPhase, 1000,
                [](uint64_t id) { return id % 2 ? kA : kB; });
  // A slow primary always has a fast alternate. Unlike kSeed in phase, a
  // fast primary may have a slow one: a hedge of a primary that outlasts
  // the delay for another reason (load) can meet a straggler.
  EXPECT_EQ(a_first.primaries, 200);
  EXPECT_EQ(a_first.both, 0);
  EXPECT_EQ(a_first.alternates, 200);
  EXPECT_EQ(b_first.primaries, 200);
  EXPECT_EQ(b_first.both, 0);
  EXPECT_EQ(b_first.alternates, 200);
}

TEST(WorkloadTest, AnyPhaseMixMeetsASlowPrimaryOneReadInFiveAtRandom) {
  std::mt19937 random(7);
  const SlowCounts counts =
      CountSlow(StragglerMix::kSeedAnyPhase, 100000,
                [&](uint64_t) { return random() % 2 ? kA : kB; });
  // 20000 expected; the binomial's standard deviation is about 126.
  EXPECT_NEAR(counts.primaries, 20000, 800);
  EXPECT_EQ(counts.both, 0);
}

TEST(WorkloadTest, AnyPhaseMixSlowsOneReplicaPerStraggler) {
  EXPECT_EQ(ReadDelay(StragglerMix::kSeedAnyPhase, kA, 0), kSlowDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeedAnyPhase, kA, 1), kSlowDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeedAnyPhase, kB, 1), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeedAnyPhase, kB, 2), kSlowDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeedAnyPhase, kB, 3), kSlowDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeedAnyPhase, kA, 3), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeedAnyPhase, kA, 4), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeedAnyPhase, kB, 4), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kSeedAnyPhase, kB, 1993), kSlowDelay);
}

TEST(WorkloadTest, FanoutMixSlowsOneReplicaOfTwoKeysInAHundred) {
  EXPECT_EQ(ReadDelay(StragglerMix::kFanout, kA, 300), kSlowDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kFanout, kB, 300), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kFanout, kB, 350), kSlowDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kFanout, kA, 350), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kFanout, kA, 301), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kFanout, kB, 301), kFastDelay);
}

TEST(WorkloadTest, FanoutMixMeetsASlowPrimaryOneReadInAHundredAtRandom) {
  std::mt19937 random(11);
  const SlowCounts counts =
      CountSlow(StragglerMix::kFanout, 100000,
                [&](uint64_t) { return random() % 2 ? kA : kB; });
  // 1000 expected; the binomial's standard deviation is about 31.
  EXPECT_NEAR(counts.primaries, 1000, 200);
  EXPECT_EQ(counts.both, 0);
}

TEST(WorkloadTest, HotKeysAreFastOnBothReplicas) {
  EXPECT_EQ(HotPath(7), "/hot?k=7");
  EXPECT_EQ(DelayForTarget(StragglerMix::kFanout, kA, HotPath(0)), kFastDelay);
  EXPECT_EQ(DelayForTarget(StragglerMix::kFanout, kB, HotPath(0)), kFastDelay);
  EXPECT_EQ(DelayForTarget(StragglerMix::kNone, kB, HotPath(3)),
            absl::ZeroDuration());
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

TEST(WorkloadTest, ShiftingBaseFollowsThePhaseStragglersDoNot) {
  const ReplicaName kA = ReplicaName::kA;
  const ReplicaName kB = ReplicaName::kB;
  EXPECT_EQ(ReadDelay(StragglerMix::kShifting, kA, 12), kFastDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kShifting, kA, kShiftPhaseIds + 12),
            kShiftedDelay);
  EXPECT_EQ(ReadDelay(StragglerMix::kShifting, kA, 2 * kShiftPhaseIds + 12),
            kFastDelay);
  for (uint64_t phase = 0; phase < 3; ++phase) {
    EXPECT_EQ(
        ReadDelay(StragglerMix::kShifting, kA, phase * kShiftPhaseIds + 20),
        kSlowDelay);
    EXPECT_EQ(
        ReadDelay(StragglerMix::kShifting, kB, phase * kShiftPhaseIds + 21),
        kSlowDelay);
  }
}

TEST(WorkloadTest, ShiftingIdsSpreadARunOverThreePhasesKeepingTheDigit) {
  for (int64_t count : {100, 101, 4500, 4501}) {
    int64_t per_phase[3] = {};
    for (int64_t i = 0; i < count; ++i) {
      const uint64_t id = ShiftingReadId(i, count);
      EXPECT_EQ(id % 10, static_cast<uint64_t>(i % 10)) << i << "/" << count;
      ASSERT_LT(id / kShiftPhaseIds, 3u);
      ++per_phase[id / kShiftPhaseIds];
    }
    for (int64_t n : per_phase) {
      EXPECT_GE(n, count / 3);
      EXPECT_LE(n, count / 3 + 1);
    }
  }
}

}  // namespace
}  // namespace tailgate::experiment
