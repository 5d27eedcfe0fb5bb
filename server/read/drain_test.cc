#include "server/read/drain.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

TEST(DrainGateTest, CountsReadsInAndOut) {
  DrainGate gate;
  EXPECT_TRUE(gate.TryEnter());
  EXPECT_TRUE(gate.TryEnter());
  EXPECT_EQ(gate.in_flight(), 2);
  gate.Exit();
  EXPECT_EQ(gate.in_flight(), 1);
  EXPECT_FALSE(gate.draining());
}

TEST(DrainGateTest, RefusesNewReadsOnceDraining) {
  DrainGate gate;
  ASSERT_TRUE(gate.TryEnter());
  gate.StartDrain();
  EXPECT_TRUE(gate.draining());
  EXPECT_FALSE(gate.TryEnter());
  EXPECT_EQ(gate.in_flight(), 1);
  gate.StartDrain();  // idempotent
  EXPECT_TRUE(gate.draining());
}

TEST(DrainGateTest, WaitForIdleReturnsAtOnceWhenIdle) {
  DrainGate gate;
  gate.StartDrain();
  EXPECT_EQ(gate.WaitForIdle(absl::InfiniteDuration()), 0);
}

TEST(DrainGateTest, WaitForIdleReturnsWhenTheLastReadExits) {
  DrainGate gate;
  ASSERT_TRUE(gate.TryEnter());
  ASSERT_TRUE(gate.TryEnter());
  gate.StartDrain();
  absl::Notification waiting;
  std::thread reads([&] {
    waiting.WaitForNotification();
    gate.Exit();
    gate.Exit();
  });
  waiting.Notify();
  EXPECT_EQ(gate.WaitForIdle(absl::InfiniteDuration()), 0);
  reads.join();
}

TEST(DrainGateTest, WaitForIdleGivesUpAfterTimeoutWithTheCountLeft) {
  DrainGate gate;
  ASSERT_TRUE(gate.TryEnter());
  gate.StartDrain();
  EXPECT_EQ(gate.WaitForIdle(absl::Milliseconds(1)), 1);
}

}  // namespace
}  // namespace tailgate::server
