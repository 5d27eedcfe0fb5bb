#include "experiment/measure/thread_cpu.h"

#include <unistd.h>

#include <atomic>
#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

TEST(ThreadCpuTest, NamesLoseTheirTrailingNumber) {
  EXPECT_EQ(ThreadGroupName("tailgate-loop-1"), "tailgate-loop");
  EXPECT_EQ(ThreadGroupName("worker_12"), "worker");
  EXPECT_EQ(ThreadGroupName("grpc_global_tim"), "grpc_global_tim");
  EXPECT_EQ(ThreadGroupName("1234"), "1234");
}

TEST(ThreadCpuTest, ABusyThreadOfThisProcessIsCountedUnderItsName) {
  std::atomic<bool> stop{false};
  std::thread busy([&stop] {
    pthread_setname_np(pthread_self(), "spinner-7");
    while (!stop.load()) {
    }
  });
  absl::StatusOr<ThreadCpu> before = ReadThreadCpu(getpid());
  ASSERT_TRUE(before.ok()) << before.status();
  // Poll until the spinner has a few clock ticks of its own.
  const absl::Time until = absl::Now() + absl::Seconds(10);
  ThreadCpu delta;
  while (absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(50));
    absl::StatusOr<ThreadCpu> after = ReadThreadCpu(getpid());
    ASSERT_TRUE(after.ok()) << after.status();
    delta = ThreadCpuDelta(*before, *after);
    if (delta["spinner"].user + delta["spinner"].system >=
        absl::Milliseconds(100)) {
      break;
    }
  }
  stop = true;
  busy.join();
  EXPECT_GE(delta["spinner"].user + delta["spinner"].system,
            absl::Milliseconds(100));
  const ThreadGroupCpu total = TotalCpu(delta);
  EXPECT_GE(total.user + total.system,
            delta["spinner"].user + delta["spinner"].system);
}

}  // namespace
}  // namespace tailgate::experiment
