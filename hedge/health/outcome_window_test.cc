#include "hedge/health/outcome_window.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

absl::Time At(int ms) { return absl::UnixEpoch() + absl::Milliseconds(ms); }

// A one-second window: ten slices of 100 ms.
constexpr absl::Duration kWindow = absl::Seconds(1);

TEST(OutcomeWindowTest, EmptyWindowCountsNothing) {
  OutcomeWindow window(kWindow);
  EXPECT_EQ(window.total(At(0)), 0);
  EXPECT_EQ(window.failures(At(0)), 0);
  EXPECT_EQ(window.failure_rate(At(0)), 0.0);
}

TEST(OutcomeWindowTest, CountsOutcomesWithinTheWindow) {
  OutcomeWindow window(kWindow);
  window.Add(At(0), /*failed=*/true);
  window.Add(At(50), /*failed=*/false);
  window.Add(At(350), /*failed=*/false);
  window.Add(At(990), /*failed=*/true);
  EXPECT_EQ(window.total(At(990)), 4);
  EXPECT_EQ(window.failures(At(990)), 2);
  EXPECT_DOUBLE_EQ(window.failure_rate(At(990)), 0.5);
}

TEST(OutcomeWindowTest, SlicesLeaveTheWindowWhenTimeMovesPastThem) {
  OutcomeWindow window(kWindow);
  window.Add(At(0), /*failed=*/true);     // slice 0
  window.Add(At(150), /*failed=*/false);  // slice 1
  window.Add(At(420), /*failed=*/true);   // slice 4
  // Slice 0 counts until slice 10 begins.
  EXPECT_EQ(window.total(At(999)), 3);
  EXPECT_EQ(window.total(At(1000)), 2);
  EXPECT_EQ(window.failures(At(1000)), 1);
  EXPECT_EQ(window.total(At(1099)), 2);
  EXPECT_EQ(window.total(At(1100)), 1);
  EXPECT_DOUBLE_EQ(window.failure_rate(At(1100)), 1.0);
  EXPECT_EQ(window.total(At(1400)), 0);
  EXPECT_EQ(window.failure_rate(At(1400)), 0.0);
  // A slot reused by a later slice starts from zero.
  window.Add(At(1405), /*failed=*/false);
  EXPECT_EQ(window.total(At(1405)), 1);
  EXPECT_EQ(window.failures(At(1405)), 0);
}

TEST(OutcomeWindowTest, TimeBeforeTheNewestCountsInTheNewestSlice) {
  OutcomeWindow window(kWindow);
  window.Add(At(500), /*failed=*/false);  // slice 5
  window.Add(At(10), /*failed=*/true);    // out of order: slice 5 too
  EXPECT_EQ(window.total(At(500)), 2);
  // Asking about an earlier time reads the window as of the newest slice.
  EXPECT_EQ(window.total(At(0)), 2);
  EXPECT_EQ(window.failures(At(0)), 1);
  // The late failure leaves with slice 5, not with slice 0.
  EXPECT_EQ(window.failures(At(1000)), 1);
  EXPECT_EQ(window.failures(At(1499)), 1);
  EXPECT_EQ(window.total(At(1500)), 0);
}

TEST(OutcomeWindowTest, ClearForgetsEverything) {
  OutcomeWindow window(kWindow);
  for (int i = 0; i < 5; ++i) window.Add(At(800 + i), /*failed=*/true);
  window.Clear();
  EXPECT_EQ(window.total(At(805)), 0);
  EXPECT_EQ(window.failures(At(805)), 0);
  // Cleared, it no longer remembers the newest time either: an earlier
  // time counts in its own slice again.
  window.Add(At(100), /*failed=*/true);
  EXPECT_EQ(window.total(At(100)), 1);
  EXPECT_EQ(window.total(At(1100)), 0);
}

}  // namespace
}  // namespace tailgate::hedge
