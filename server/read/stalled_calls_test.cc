#include "server/read/stalled_calls.h"

#include <atomic>
#include <functional>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);
constexpr absl::Duration kSendTimeout = absl::Seconds(5);

struct CountingCall : StalledCall {
  void Cancel(bool first) override {
    ++cancels;
    if (first) ++first_cancels;
    if (on_cancel) on_cancel();
  }
  std::atomic<int> cancels{0};
  std::atomic<int> first_cancels{0};
  std::function<void()> on_cancel;
};

TEST(StalledCallsTest, CancelsOnlyCallsPastTheSendTimeout) {
  StalledCalls calls(kSendTimeout, absl::ZeroDuration());
  CountingCall early, late;
  calls.Watch(&early, kT0);
  const uint64_t late_token = calls.Watch(&late, kT0 + absl::Seconds(2));
  EXPECT_EQ(calls.ReapExpired(kT0 + absl::Seconds(4)), 0);
  EXPECT_EQ(calls.ReapExpired(kT0 + kSendTimeout), 1);
  EXPECT_EQ(early.cancels, 1);
  EXPECT_EQ(late.cancels, 0);
  calls.Unwatch(late_token);  // sent in time
  // early is still watched (gRPC has not finished its cancel): cancelled
  // again, but as a repeat, and counted once.
  EXPECT_EQ(calls.ReapExpired(kT0 + absl::Seconds(60)), 1);
  EXPECT_EQ(early.cancels, 2);
  EXPECT_EQ(early.first_cancels, 1);
  EXPECT_EQ(late.cancels, 0);
  EXPECT_EQ(calls.cancelled(), 1u);
}

TEST(StalledCallsTest, UnwatchedCallsAreNeverCancelled) {
  StalledCalls calls(kSendTimeout, absl::ZeroDuration());
  CountingCall call;
  calls.Unwatch(calls.Watch(&call, kT0));
  EXPECT_EQ(calls.ReapExpired(kT0 + absl::Hours(1)), 0);
  EXPECT_EQ(call.cancels, 0);
  EXPECT_EQ(calls.watched(), 0);
}

TEST(StalledCallsTest, UnwatchInsideCancelDoesNotDeadlock) {
  // gRPC may run OnDone (which unwatches) inside TryCancel.
  StalledCalls calls(kSendTimeout, absl::ZeroDuration());
  CountingCall call;
  const uint64_t token = calls.Watch(&call, kT0);
  call.on_cancel = [&] { calls.Unwatch(token); };
  EXPECT_EQ(calls.ReapExpired(kT0 + kSendTimeout), 1);
  EXPECT_EQ(calls.watched(), 0);
}

TEST(StalledCallsTest, ReaperThreadCancelsWithoutBeingAsked) {
  StalledCalls calls(absl::Milliseconds(20), absl::Milliseconds(10));
  CountingCall call;
  const uint64_t token = calls.Watch(&call, absl::Now());
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (call.cancels == 0 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_GE(call.cancels, 1);
  calls.Unwatch(token);
}

}  // namespace
}  // namespace tailgate::server
