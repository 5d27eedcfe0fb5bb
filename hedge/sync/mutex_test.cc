#include "hedge/sync/mutex.h"

#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

struct Counter {
  Mutex mu;
  int total ABSL_GUARDED_BY(mu) = 0;
};

TEST(MutexTest, ThreadsIncrementingUnderMutexLockReachTheExactTotal) {
  constexpr int kThreads = 4;
  constexpr int kIncrements = 100'000;
  Counter counter;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&counter] {
      for (int i = 0; i < kIncrements; ++i) {
        MutexLock lock(&counter.mu);
        // Read and write apart, so a lost update would show.
        const int seen = counter.total;
        counter.total = seen + 1;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  MutexLock lock(&counter.mu);
  EXPECT_EQ(counter.total, kThreads * kIncrements);
}

TEST(MutexTest, LockAndUnlockPairUp) {
  Counter counter;
  counter.mu.Lock();
  counter.total = 7;
  counter.mu.Unlock();
  // Unlocked again: another thread can take it.
  std::thread other([&counter] {
    MutexLock lock(&counter.mu);
    counter.total += 1;
  });
  other.join();
  MutexLock lock(&counter.mu);
  EXPECT_EQ(counter.total, 8);
}

struct Flag {
  Mutex mu;
  CondVar changed;
  bool set ABSL_GUARDED_BY(mu) = false;
};

TEST(CondVarTest, WaitReturnsOnceSignalledAndHoldsTheMutex) {
  Flag flag;
  std::thread setter([&flag] {
    MutexLock lock(&flag.mu);
    flag.set = true;
    flag.changed.SignalAll();
  });
  {
    MutexLock lock(&flag.mu);
    while (!flag.set) flag.changed.Wait(&flag.mu);
    EXPECT_TRUE(flag.set);
  }
  setter.join();
}

TEST(CondVarTest, WaitWithDeadlineReportsThePassedDeadline) {
  Flag flag;
  MutexLock lock(&flag.mu);
  // Already passed: returns at once, without waiting.
  EXPECT_TRUE(flag.changed.WaitWithDeadline(&flag.mu, absl::InfinitePast()));
  const absl::Time deadline = absl::Now() + absl::Milliseconds(5);
  while (!flag.changed.WaitWithDeadline(&flag.mu, deadline)) {
  }
  EXPECT_GE(absl::Now(), deadline);
  // The mutex is still held: the guarded write below needs it.
  flag.set = true;
  EXPECT_TRUE(flag.set);
}

TEST(CondVarTest, WaitWithDeadlineReturnsFalseWhenSignalledInTime) {
  Flag flag;
  std::thread setter([&flag] {
    MutexLock lock(&flag.mu);
    flag.set = true;
    flag.changed.Signal();
  });
  bool timed_out = false;
  {
    MutexLock lock(&flag.mu);
    const absl::Time deadline = absl::InfiniteFuture();
    while (!flag.set && !timed_out) {
      timed_out = flag.changed.WaitWithDeadline(&flag.mu, deadline);
    }
    EXPECT_TRUE(flag.set);
  }
  EXPECT_FALSE(timed_out);
  setter.join();
}

}  // namespace
}  // namespace tailgate::hedge
