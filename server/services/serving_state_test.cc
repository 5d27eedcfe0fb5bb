#include "server/services/serving_state.h"

#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::server::services {
namespace {

using ::testing::ElementsAre;

TEST(ServingStateTest, AListenerHearsTheStateThenEachChange) {
  ServingState state(false);
  std::vector<bool> heard;
  ServingState::Subscription subscription =
      state.Subscribe([&heard](bool serving) { heard.push_back(serving); });
  state.Set(true);
  state.Set(true);  // no change: nothing to tell
  state.Set(false);
  EXPECT_THAT(heard, ElementsAre(false, true, false));
  EXPECT_FALSE(state.serving());
}

TEST(ServingStateTest, AListenerGoneWithItsSubscriptionHearsNothingMore) {
  ServingState state(true);
  int calls = 0;
  {
    ServingState::Subscription subscription =
        state.Subscribe([&calls](bool) { ++calls; });
    ServingState::Subscription moved = std::move(subscription);
    state.Set(false);
  }
  state.Set(true);
  EXPECT_EQ(calls, 2);  // at Subscribe, and the one change
  ServingState::Subscription reset = state.Subscribe([&calls](bool) { ++calls; });
  reset.Reset();
  state.Set(false);
  EXPECT_EQ(calls, 3);
}

TEST(ServingStateTest, ChangesFromManyThreadsReachListenersInOrder) {
  ServingState state(false);
  std::vector<bool> heard;  // written under the state's lock
  ServingState::Subscription subscription =
      state.Subscribe([&heard](bool serving) { heard.push_back(serving); });
  std::vector<std::thread> setters;
  for (int t = 0; t < 4; ++t) {
    setters.emplace_back([&state, t] {
      for (int i = 0; i < 1000; ++i) state.Set((i + t) % 2 == 0);
    });
  }
  for (std::thread& setter : setters) setter.join();
  // Each change is heard, and heard changes alternate: none is lost or
  // told twice.
  for (size_t i = 1; i < heard.size(); ++i) {
    ASSERT_NE(heard[i], heard[i - 1]) << i;
  }
  EXPECT_EQ(heard.back(), state.serving());
}

}  // namespace
}  // namespace tailgate::server::services
