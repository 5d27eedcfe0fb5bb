#include "tests/fake_clock.h"

#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::testing {
namespace {

TEST(FakeClockTest, MovesOnlyWhenTold) {
  FakeClock clock;
  EXPECT_EQ(clock.Now(), absl::UnixEpoch());
  EXPECT_EQ(clock.Now(), absl::UnixEpoch());
  clock.Advance(absl::Milliseconds(25));
  EXPECT_EQ(clock.Now(), absl::UnixEpoch() + absl::Milliseconds(25));
  clock.Set(absl::UnixEpoch() + absl::Seconds(3));
  EXPECT_EQ(clock.Now(), absl::UnixEpoch() + absl::Seconds(3));
}

TEST(FakeClockTest, IsAHedgeClock) {
  FakeClock fake(absl::UnixEpoch() + absl::Hours(1));
  const hedge::Clock& clock = fake;
  EXPECT_EQ(clock.Now(), absl::UnixEpoch() + absl::Hours(1));
}

TEST(FakeClockTest, ConcurrentAdvancesAllCount) {
  FakeClock clock;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&clock] {
      for (int i = 0; i < 1000; ++i) {
        clock.Advance(absl::Microseconds(1));
        (void)clock.Now();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(clock.Now(), absl::UnixEpoch() + absl::Milliseconds(4));
}

}  // namespace
}  // namespace tailgate::testing
