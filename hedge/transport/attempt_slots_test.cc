#include "hedge/transport/attempt_slots.h"

#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::hedge::transport {
namespace {

using ::testing::Contains;
using ::testing::Not;

std::vector<AttemptSlot*> TakeN(AttemptSlotPool& pool, int n) {
  std::vector<AttemptSlot*> slots;
  for (int i = 0; i < n; ++i) {
    slots.push_back(pool.Take(nullptr, i, absl::UnixEpoch()));
  }
  return slots;
}

TEST(AttemptSlotPoolTest, ReusesAReleasedSlot) {
  AttemptSlotPool pool;
  AttemptSlot* first = pool.Take(nullptr, 0, absl::UnixEpoch());
  pool.Release(first);
  EXPECT_EQ(pool.Take(nullptr, 1, absl::UnixEpoch()), first);
  EXPECT_EQ(pool.size(), 1u);
}

TEST(AttemptSlotPoolTest, ShrinkFreesTheFreeSlotsBeyondTheReserve) {
  AttemptSlotPool pool;
  std::vector<AttemptSlot*> burst = TakeN(pool, 20);
  for (AttemptSlot* slot : burst) pool.Release(slot);
  ASSERT_EQ(pool.size(), 20u);

  pool.Shrink(8);

  EXPECT_EQ(pool.size(), 8u);
  EXPECT_EQ(pool.free(), 8u);
  // The kept ones are the last released, and they still serve.
  std::vector<AttemptSlot*> again = TakeN(pool, 8);
  for (int i = 12; i < 20; ++i) EXPECT_THAT(again, Contains(burst[i]));
  EXPECT_EQ(pool.size(), 8u);
}

TEST(AttemptSlotPoolTest, ShrinkLeavesSlotsInUse) {
  AttemptSlotPool pool;
  std::vector<AttemptSlot*> slots = TakeN(pool, 10);
  for (int i = 0; i < 4; ++i) pool.Release(slots[i]);

  pool.Shrink(0);

  EXPECT_EQ(pool.size(), 6u);
  EXPECT_EQ(pool.free(), 0u);
  for (int i = 4; i < 10; ++i) {
    EXPECT_EQ(slots[i]->index, i);  // untouched, still its attempt's
    pool.Release(slots[i]);
  }
  EXPECT_EQ(pool.free(), 6u);
  EXPECT_THAT(TakeN(pool, 1), Not(Contains(slots[0])));
}

TEST(AttemptSlotPoolTest, ShrinkToMoreThanIsFreeKeepsThemAll) {
  AttemptSlotPool pool;
  for (AttemptSlot* slot : TakeN(pool, 3)) pool.Release(slot);
  pool.Shrink(8);
  EXPECT_EQ(pool.size(), 3u);
}

}  // namespace
}  // namespace tailgate::hedge::transport
