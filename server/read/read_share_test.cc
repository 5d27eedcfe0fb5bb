#include "server/read/read_share.h"

#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

TEST(ReadShareTest, TakesUpToItsLimitAndNoMore) {
  ReadShare share(2);
  EXPECT_TRUE(share.TryTake());
  EXPECT_TRUE(share.TryTake());
  EXPECT_FALSE(share.TryTake());
  EXPECT_EQ(share.held(), 2);
  share.Give();
  EXPECT_TRUE(share.TryTake());
}

TEST(ReadShareTest, NoLimitOfItsOwn) {
  ReadShare share(0);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(share.TryTake());
  EXPECT_EQ(share.held(), 1000);
}

TEST(ReadShareTest, RoomRunsOnceWhenAPlaceComesBackToAWaiter) {
  ReadShare share(1);
  int rooms = 0;
  share.set_room([&rooms] { ++rooms; });
  ASSERT_TRUE(share.TryTake());
  share.Give();
  EXPECT_EQ(rooms, 0) << "nobody waited";
  ASSERT_TRUE(share.TryTake());
  share.set_waiting();
  share.Give();
  EXPECT_EQ(rooms, 1);
  ASSERT_TRUE(share.TryTake());
  share.Give();
  EXPECT_EQ(rooms, 1) << "once a wait";
}

TEST(ReadShareTest, ARoomClearedIsNotRun) {
  ReadShare share(1);
  int rooms = 0;
  share.set_room([&rooms] { ++rooms; });
  ASSERT_TRUE(share.TryTake());
  share.set_waiting();
  share.set_room(nullptr);
  share.Give();
  EXPECT_EQ(rooms, 0);
}

}  // namespace
}  // namespace tailgate::server
