#include "hedge/policy/retry_budget.h"

#include <atomic>
#include <deque>
#include <limits>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/fake_clock.h"

namespace tailgate::hedge {
namespace {

using ::tailgate::testing::FakeClock;

// Takes every whole credit there is at `now`; returns how many.
int Drain(RetryBudget& budget, absl::Time now) {
  int taken = 0;
  while (budget.TryConsume(now)) ++taken;
  return taken;
}

TEST(RetryBudgetConfigTest, AcceptsTheEdgesOfEachRange) {
  for (const RetryBudgetConfig config :
       {RetryBudgetConfig{0, 0, kMinRetryWindow},
        RetryBudgetConfig{1, kMaxRetryPerSecond, kMaxRetryWindow},
        RetryBudgetConfig{}}) {
    EXPECT_TRUE(ValidateRetryBudgetConfig(config).ok())
        << config.fraction << " " << config.per_second << " " << config.window;
  }
}

TEST(RetryBudgetConfigTest, RejectionNamesTheField) {
  EXPECT_EQ(ValidateRetryBudgetConfig({1.5, 10, absl::Seconds(10)}).message(),
            "retry_fraction: must be in [0, 1], got 1.5");
  EXPECT_EQ(ValidateRetryBudgetConfig({0.2, -1, absl::Seconds(10)}).message(),
            "retry_per_second: must be in [0, 1000000], got -1");
  EXPECT_EQ(
      ValidateRetryBudgetConfig({0.2, 10, absl::Milliseconds(99)}).message(),
      "retry_window: must be in [100ms, 1h], got 99ms");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const struct {
    RetryBudgetConfig config;
    const char* field;
  } kBad[] = {
      {{nan, 10, absl::Seconds(10)}, "retry_fraction: "},
      {{0.2, nan, absl::Seconds(10)}, "retry_per_second: "},
      {{0.2, inf, absl::Seconds(10)}, "retry_per_second: "},
      {{0.2, 1.1e6, absl::Seconds(10)}, "retry_per_second: "},
      {{0.2, 10, absl::Hours(1) + absl::Nanoseconds(1)}, "retry_window: "},
      {{0.2, 10, absl::InfiniteDuration()}, "retry_window: "},
      {{0.2, 10, -absl::Seconds(1)}, "retry_window: "},
  };
  for (const auto& bad : kBad) {
    const absl::Status status = ValidateRetryBudgetConfig(bad.config);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(status.message(), bad.field))
        << status.message();
  }
}

TEST(RetryBudgetTest, TheFloorAloneAllowsPerSecondTimesWindow) {
  FakeClock clock;
  RetryBudget budget({0, 10, absl::Seconds(10)});
  EXPECT_DOUBLE_EQ(budget.credits(clock.Now()), 100);
  EXPECT_EQ(Drain(budget, clock.Now()), 100);
  EXPECT_DOUBLE_EQ(budget.credits(clock.Now()), 0);
  EXPECT_EQ(budget.consumed(), 100u);
}

TEST(RetryBudgetTest, EachReadDepositsTheFraction) {
  FakeClock clock;
  RetryBudget budget({0.2, 0, absl::Seconds(10)});
  EXPECT_FALSE(budget.TryConsume(clock.Now()));
  for (int i = 0; i < 4; ++i) budget.OnAdmission(clock.Now());
  EXPECT_FALSE(budget.TryConsume(clock.Now())) << "0.8 of a credit";
  budget.OnAdmission(clock.Now());
  EXPECT_TRUE(budget.TryConsume(clock.Now()));
  EXPECT_FALSE(budget.TryConsume(clock.Now()));
  EXPECT_EQ(budget.admitted(), 5u);
}

TEST(RetryBudgetTest, WithdrawalsExpireWithTheirSlice) {
  FakeClock clock;
  RetryBudget budget({0, 1, absl::Seconds(10)});  // 10 credits
  EXPECT_EQ(Drain(budget, clock.Now()), 10);
  // Nine slices later the withdrawals are still in the window...
  clock.Advance(absl::Seconds(9.999));
  EXPECT_FALSE(budget.TryConsume(clock.Now()));
  // ...and in the tenth they have left it.
  clock.Advance(absl::Milliseconds(1));
  EXPECT_EQ(Drain(budget, clock.Now()), 10);
}

TEST(RetryBudgetTest, DepositsExpireWithTheirSlice) {
  FakeClock clock;
  RetryBudget budget({1, 0, absl::Seconds(1)});
  budget.OnAdmission(clock.Now());
  budget.OnAdmission(clock.Now());
  clock.Advance(absl::Milliseconds(999));
  EXPECT_DOUBLE_EQ(budget.credits(clock.Now()), 2);
  clock.Advance(absl::Milliseconds(1));
  EXPECT_DOUBLE_EQ(budget.credits(clock.Now()), 0);
  EXPECT_FALSE(budget.TryConsume(clock.Now()));
}

TEST(RetryBudgetTest, ALongIdleEmptiesEverySlice) {
  FakeClock clock;
  RetryBudget budget({1, 0, absl::Seconds(1)});
  for (int i = 0; i < 10; ++i) {
    budget.OnAdmission(clock.Now());
    clock.Advance(absl::Milliseconds(100));
  }
  EXPECT_DOUBLE_EQ(budget.credits(clock.Now()), 9);  // the first has left
  clock.Advance(absl::Hours(5));
  EXPECT_DOUBLE_EQ(budget.credits(clock.Now()), 0);
  budget.OnAdmission(clock.Now());
  EXPECT_DOUBLE_EQ(budget.credits(clock.Now()), 1);
}

TEST(RetryBudgetTest, AnEarlierTimeCountsInTheNewestSlice) {
  FakeClock clock;
  RetryBudget budget({1, 0, absl::Seconds(1)});
  const absl::Time early = clock.Now();
  clock.Advance(absl::Milliseconds(500));
  budget.OnAdmission(clock.Now());
  budget.OnAdmission(early);  // a thread that read the clock before
  clock.Advance(absl::Milliseconds(999));
  EXPECT_DOUBLE_EQ(budget.credits(clock.Now()), 2);
  clock.Advance(absl::Milliseconds(1));
  EXPECT_DOUBLE_EQ(budget.credits(clock.Now()), 0);
}

TEST(RetryBudgetTest, ZeroFractionAndZeroFloorTakeNothing) {
  FakeClock clock;
  RetryBudget budget({0, 0, absl::Seconds(10)});
  for (int i = 0; i < 100; ++i) budget.OnAdmission(clock.Now());
  EXPECT_FALSE(budget.TryConsume(clock.Now()));
  EXPECT_DOUBLE_EQ(budget.credits(clock.Now()), 0);
}

TEST(RetryBudgetTest, FallbacksStayWithinTheWindowBound) {
  // Reads and failures at varying rates over many windows; at every
  // fallback, the fallbacks of the trailing window (the slices in it) stay
  // within per_second * window + fraction * reads in it.
  const RetryBudgetConfig config{0.25, 2, absl::Seconds(1)};
  FakeClock clock;
  RetryBudget budget(config);
  const absl::Duration slice = config.window / RetryBudget::kSlices;
  std::deque<absl::Time> reads, fallbacks;
  int taken = 0, refused = 0;
  for (int step = 0; step < 20000; ++step) {
    clock.Advance(absl::Microseconds(137 + (step % 7) * 211));
    const absl::Time now = clock.Now();
    if (step % 3 != 0) {
      budget.OnAdmission(now);
      reads.push_back(now);
    }
    // Bursts of failures in some stretches, none in others.
    if ((step / 1500) % 2 == 0 && budget.TryConsume(now)) {
      ++taken;
      fallbacks.push_back(now);
      const absl::Time start = absl::UnixEpoch() +
                               absl::Floor(now - absl::UnixEpoch(), slice) -
                               (RetryBudget::kSlices - 1) * slice;
      while (!reads.empty() && reads.front() < start) reads.pop_front();
      while (!fallbacks.empty() && fallbacks.front() < start) {
        fallbacks.pop_front();
      }
      ASSERT_LE(static_cast<double>(fallbacks.size()),
                config.per_second * 1 + config.fraction * reads.size())
          << "step " << step;
    } else {
      ++refused;
    }
  }
  EXPECT_GT(taken, 1000);
  EXPECT_GT(refused, 1000);
}

TEST(RetryBudgetTest, ConcurrentUseKeepsTheBound) {
  FakeClock clock;  // time stands still: one window throughout
  RetryBudget budget({0.1, 5, absl::Seconds(10)});  // reserve 50
  std::vector<std::thread> threads;
  std::atomic<int> taken{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5000; ++i) {
        budget.OnAdmission(clock.Now());
        if (budget.TryConsume(clock.Now())) taken.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(taken.load() + Drain(budget, clock.Now()), 50 + 2000);
  EXPECT_EQ(budget.consumed(), 2050u);
  EXPECT_EQ(budget.admitted(), 20000u);
}

}  // namespace
}  // namespace tailgate::hedge
