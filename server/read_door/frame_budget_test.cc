#include "server/read_door/frame_budget.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::server::read_door {
namespace {

using Verdict = FrameBudget::Verdict;

const absl::Time kStart = absl::FromUnixSeconds(1'000'000);

TEST(FrameBudgetTest, AThirdPingTooSoonWithoutCallsEndsTheConnection) {
  FrameBudget budget;
  EXPECT_EQ(budget.OnPing(kStart, false), Verdict::kOk);  // the first: free
  // Each sooner than two hours after the last: strikes 1 and 2 pass.
  EXPECT_EQ(budget.OnPing(kStart + absl::Seconds(1), false), Verdict::kOk);
  EXPECT_EQ(budget.OnPing(kStart + absl::Seconds(2), false), Verdict::kOk);
  EXPECT_EQ(budget.OnPing(kStart + absl::Seconds(3), false),
            Verdict::kTooManyPings);
  EXPECT_EQ(FrameBudget::DebugData(Verdict::kTooManyPings), "too_many_pings");
}

TEST(FrameBudgetTest, PingsAtTheIntervalAreNoStrike) {
  FrameBudget budget;
  absl::Time now = kStart;
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(budget.OnPing(now, true), Verdict::kOk) << i;
    now += FrameBudget::kMinPingInterval;
  }
  // Without calls the interval is two hours: five minutes is too soon.
  for (int i = 0; i < FrameBudget::kMaxPingStrikes; ++i) {
    EXPECT_EQ(budget.OnPing(now, false), Verdict::kOk) << i;
    now += FrameBudget::kMinPingInterval;
  }
  EXPECT_EQ(budget.OnPing(now, false), Verdict::kTooManyPings);
}

TEST(FrameBudgetTest, AnAnswerSentClearsTheStrikes) {
  FrameBudget budget;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i <= FrameBudget::kMaxPingStrikes; ++i) {
      EXPECT_EQ(budget.OnPing(kStart + absl::Milliseconds(i), true),
                Verdict::kOk);
    }
    budget.OnAnswerSent();
  }
}

TEST(FrameBudgetTest, IdleFramesAreBoundedByTheWorkDone) {
  FrameBudget budget;
  for (int64_t i = 0; i < FrameBudget::kIdleFrameAllowance; ++i) {
    ASSERT_EQ(budget.OnIdleFrame(), Verdict::kOk) << i;
  }
  budget.OnWork();  // one more piece of work: kIdleFramesPerWork more
  for (int64_t i = 0; i < FrameBudget::kIdleFramesPerWork; ++i) {
    ASSERT_EQ(budget.OnIdleFrame(), Verdict::kOk) << i;
  }
  EXPECT_EQ(budget.OnIdleFrame(), Verdict::kTooManyIdleFrames);
  EXPECT_EQ(FrameBudget::DebugData(Verdict::kTooManyIdleFrames),
            "too_many_idle_frames");
}

TEST(FrameBudgetTest, PingsCountAsIdleFrames) {
  FrameBudget budget;
  absl::Time now = kStart;
  for (int64_t i = 0; i < FrameBudget::kIdleFrameAllowance; ++i) {
    ASSERT_EQ(budget.OnPing(now, true), Verdict::kOk) << i;
    now += FrameBudget::kMinPingInterval;
  }
  EXPECT_EQ(budget.OnPing(now, true), Verdict::kTooManyIdleFrames);
}

}  // namespace
}  // namespace tailgate::server::read_door
