#include "hedge/policy/admission_limits.h"

#include <atomic>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

TEST(AdmissionConfigTest, AcceptsTheEdgesOfEachRange) {
  EXPECT_TRUE(ValidateAdmissionConfig(AdmissionConfig{}).ok());
  EXPECT_TRUE(ValidateAdmissionConfig({1, 1}).ok());
  EXPECT_TRUE(ValidateAdmissionConfig({1'000'000, 1'000'000}).ok());
}

TEST(AdmissionConfigTest, RejectionNamesTheField) {
  EXPECT_EQ(ValidateAdmissionConfig({0, 160}).message(),
            "max_requests: must be in [1, 1000000], got 0");
  EXPECT_EQ(ValidateAdmissionConfig({-5, 160}).message(),
            "max_requests: must be in [1, 1000000], got -5");
  EXPECT_EQ(ValidateAdmissionConfig({128, 0}).message(),
            "max_attempts: must be in [1, 1000000], got 0");
  EXPECT_EQ(ValidateAdmissionConfig({128, 1'000'001}).message(),
            "max_attempts: must be in [1, 1000000], got 1000001");
  EXPECT_EQ(ValidateAdmissionConfig({0, 0}).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SemaphoreTest, RefusesAtOnceWhenFull) {
  Semaphore semaphore(2);
  std::optional<Permit> a = semaphore.TryAcquire();
  std::optional<Permit> b = semaphore.TryAcquire();
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_TRUE(a->held());
  EXPECT_EQ(semaphore.in_use(), 2);
  EXPECT_FALSE(semaphore.TryAcquire().has_value());
  EXPECT_EQ(semaphore.in_use(), 2);  // a refusal takes nothing
  a->Release();
  EXPECT_EQ(semaphore.in_use(), 1);
  EXPECT_TRUE(semaphore.TryAcquire().has_value());
}

TEST(SemaphoreTest, PermitReleasesWhenDestroyed) {
  Semaphore semaphore(1);
  {
    std::optional<Permit> permit = semaphore.TryAcquire();
    ASSERT_TRUE(permit.has_value());
    EXPECT_EQ(semaphore.in_use(), 1);
  }
  EXPECT_EQ(semaphore.in_use(), 0);
}

TEST(SemaphoreTest, ReleaseHappensOnce) {
  Semaphore semaphore(2);
  std::optional<Permit> keep = semaphore.TryAcquire();
  {
    Permit permit = *semaphore.TryAcquire();
    permit.Release();
    EXPECT_FALSE(permit.held());
    permit.Release();
    EXPECT_EQ(semaphore.in_use(), 1);
  }  // and the destructor does nothing more
  EXPECT_EQ(semaphore.in_use(), 1);
}

TEST(SemaphoreTest, DefaultPermitHoldsNothing) {
  Permit permit;
  EXPECT_FALSE(permit.held());
  permit.Release();
}

TEST(SemaphoreTest, MoveConstructionTransfersTheSlot) {
  Semaphore semaphore(1);
  Permit first = *semaphore.TryAcquire();
  {
    Permit second(std::move(first));
    EXPECT_FALSE(first.held());  // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(second.held());
    EXPECT_EQ(semaphore.in_use(), 1);
  }
  EXPECT_EQ(semaphore.in_use(), 0);
  first.Release();  // moved-from: nothing to release
  EXPECT_EQ(semaphore.in_use(), 0);
}

TEST(SemaphoreTest, MoveAssignmentReleasesTheOverwrittenSlot) {
  Semaphore semaphore(2);
  Permit a = *semaphore.TryAcquire();
  Permit b = *semaphore.TryAcquire();
  ASSERT_EQ(semaphore.in_use(), 2);
  a = std::move(b);
  EXPECT_EQ(semaphore.in_use(), 1);
  EXPECT_TRUE(a.held());
  EXPECT_FALSE(b.held());  // NOLINT(bugprone-use-after-move)
  a.Release();
  EXPECT_EQ(semaphore.in_use(), 0);

  Permit empty;
  Permit c = *semaphore.TryAcquire();
  c = std::move(empty);  // takes nothing, gives back c's slot
  EXPECT_FALSE(c.held());
  EXPECT_EQ(semaphore.in_use(), 0);
}

TEST(AdmissionLimitsTest, RequestAndAttemptLimitsAreSeparate) {
  AdmissionLimits limits({1, 2});
  std::optional<Permit> request = limits.TryAdmitRequest();
  ASSERT_TRUE(request.has_value());
  EXPECT_FALSE(limits.TryAdmitRequest().has_value());
  std::optional<Permit> a = limits.TryStartAttempt();
  std::optional<Permit> b = limits.TryStartAttempt();
  EXPECT_TRUE(a.has_value() && b.has_value());
  EXPECT_FALSE(limits.TryStartAttempt().has_value());
  EXPECT_EQ(limits.requests().in_use(), 1);
  EXPECT_EQ(limits.attempts().in_use(), 2);
  EXPECT_EQ(limits.requests().capacity(), 1);
  EXPECT_EQ(limits.attempts().capacity(), 2);
}

TEST(AdmissionLimitsTest, OverlapsAreWhatAttemptsHaveBeyondRequests) {
  AdmissionLimits limits({/*max_requests=*/3, /*max_attempts=*/5});
  EXPECT_EQ(limits.overlaps().capacity(), 2);
  std::optional<Permit> first = limits.TryStartOverlap();
  std::optional<Permit> second = limits.TryStartOverlap();
  ASSERT_TRUE(first.has_value() && second.has_value());
  EXPECT_TRUE(first->held());
  EXPECT_FALSE(limits.TryStartOverlap().has_value());
  first->Release();
  EXPECT_TRUE(limits.TryStartOverlap().has_value());
}

TEST(AdmissionLimitsTest, NoOverlapRoomMeansNoOverlapLimit) {
  for (const AdmissionConfig config :
       {AdmissionConfig{4, 4}, AdmissionConfig{10, 3}}) {
    AdmissionLimits limits(config);
    for (int i = 0; i < 20; ++i) {
      std::optional<Permit> overlap = limits.TryStartOverlap();
      ASSERT_TRUE(overlap.has_value());
      EXPECT_FALSE(overlap->held());
    }
  }
}

TEST(SemaphoreTest, ConcurrentHoldersNeverExceedCapacity) {
  constexpr int kCapacity = 3;
  constexpr int kThreads = 8;
  Semaphore semaphore(kCapacity);
  std::atomic<int> holders{0};
  std::atomic<int> over{0};
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        std::optional<Permit> permit = semaphore.TryAcquire();
        if (!permit.has_value()) continue;
        granted.fetch_add(1);
        if (holders.fetch_add(1) + 1 > kCapacity) over.fetch_add(1);
        holders.fetch_sub(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(over.load(), 0);
  EXPECT_GT(granted.load(), 0);
  EXPECT_EQ(semaphore.in_use(), 0);
}

TEST(SemaphoreTest, PermitMayBeReleasedOnAnotherThread) {
  Semaphore semaphore(1);
  Permit permit = *semaphore.TryAcquire();
  std::thread([p = std::move(permit)]() mutable { p.Release(); }).join();
  EXPECT_EQ(semaphore.in_use(), 0);
  EXPECT_TRUE(semaphore.TryAcquire().has_value());
}

}  // namespace
}  // namespace tailgate::hedge
