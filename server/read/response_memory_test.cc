#include "server/read/response_memory.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

using Admission = ResponseMemory::Admission;

TEST(ResponseMemoryTest, CountsCallsUntilDoneUpToTheLimit) {
  ResponseMemory memory(/*max_calls=*/2, /*max_bytes=*/100);
  EXPECT_EQ(memory.TryAdmit(), Admission::kAdmitted);
  EXPECT_EQ(memory.TryAdmit(), Admission::kAdmitted);
  EXPECT_EQ(memory.TryAdmit(), Admission::kTooManyCalls);
  memory.Done(0);
  EXPECT_EQ(memory.calls(), 1);
  EXPECT_EQ(memory.TryAdmit(), Admission::kAdmitted);
}

TEST(ResponseMemoryTest, HeldBytesNeverPassTheCap) {
  ResponseMemory memory(10, 100);
  ASSERT_EQ(memory.TryAdmit(), Admission::kAdmitted);
  ASSERT_EQ(memory.TryAdmit(), Admission::kAdmitted);
  EXPECT_TRUE(memory.TryHold(60));
  EXPECT_FALSE(memory.TryHold(41));  // 101 > 100: dropped, nothing held
  EXPECT_EQ(memory.held_bytes(), 60);
  EXPECT_TRUE(memory.TryHold(40));  // exactly at the cap
  EXPECT_EQ(memory.held_bytes(), 100);
  // At the cap, new reads are refused at once.
  EXPECT_EQ(memory.TryAdmit(), Admission::kBufferFull);
  memory.Done(60);
  EXPECT_EQ(memory.held_bytes(), 40);
  EXPECT_EQ(memory.TryAdmit(), Admission::kAdmitted);
  EXPECT_EQ(memory.peak_held_bytes(), 100);
}

TEST(ResponseMemoryTest, UnholdGivesBytesBackAndKeepsTheCall) {
  ResponseMemory memory(1, 100);
  ASSERT_EQ(memory.TryAdmit(), Admission::kAdmitted);
  EXPECT_TRUE(memory.TryHold(70));
  memory.Unhold(70);
  EXPECT_EQ(memory.held_bytes(), 0);
  EXPECT_EQ(memory.calls(), 1);
  // Held for no call at all (a service's answer): counted the same.
  EXPECT_TRUE(memory.TryHold(100));
  EXPECT_FALSE(memory.TryHold(1));
  memory.Unhold(100);
  memory.Unhold(0);
  EXPECT_EQ(memory.held_bytes(), 0);
}

TEST(ResponseMemoryTest, AdmitsOnlyWithRoomForOneMoreLargestAnswer) {
  ResponseMemory memory(10, 100, /*admit_room=*/30);
  ASSERT_EQ(memory.TryAdmit(), Admission::kAdmitted);
  EXPECT_TRUE(memory.TryHold(70));  // 30 left: room for one more
  EXPECT_EQ(memory.TryAdmit(), Admission::kAdmitted);
  EXPECT_TRUE(memory.TryHold(1));  // 29 left: not enough
  EXPECT_EQ(memory.TryAdmit(), Admission::kBufferFull);
  memory.Done(1);
  EXPECT_EQ(memory.TryAdmit(), Admission::kAdmitted);
}

TEST(ResponseMemoryTest, ConcurrentHoldsStayUnderTheCap) {
  ResponseMemory memory(1000, 1000);
  std::vector<std::thread> threads;
  std::atomic<int> held{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        if (memory.TryHold(7)) held.fetch_add(7);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LE(memory.held_bytes(), 1000);
  EXPECT_EQ(memory.held_bytes(), held.load());
  EXPECT_EQ(memory.peak_held_bytes(), memory.held_bytes());
}

}  // namespace
}  // namespace tailgate::server
