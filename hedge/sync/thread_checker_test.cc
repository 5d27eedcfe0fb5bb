#include "hedge/sync/thread_checker.h"

#include <thread>

#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

bool CalledOnOwnerFromNewThread(const ThreadChecker& checker) {
  bool result = true;
  std::thread other([&] { result = checker.CalledOnOwner(); });
  other.join();
  return result;
}

TEST(ThreadCheckerTest, BoundThreadIsTheOwnerAndNoOtherIs) {
  ThreadChecker checker;
  checker.BindToCurrentThread();
  EXPECT_TRUE(checker.CalledOnOwner());
  EXPECT_FALSE(CalledOnOwnerFromNewThread(checker));
  checker.AssertOnOwner();  // does not abort on the owner
}

TEST(ThreadCheckerTest, FirstCheckBindsAnUnboundChecker) {
  ThreadChecker checker;
  bool first = false;
  std::thread other([&] { first = checker.CalledOnOwner(); });
  other.join();
  EXPECT_TRUE(first);
  EXPECT_FALSE(checker.CalledOnOwner());  // `other` owns it now
}

TEST(ThreadCheckerTest, DetachLetsTheNextThreadTakeOver) {
  ThreadChecker checker;
  checker.BindToCurrentThread();
  checker.Detach();
  bool taken = false;
  std::thread other([&] { taken = checker.CalledOnOwner(); });
  other.join();
  EXPECT_TRUE(taken);
  EXPECT_FALSE(checker.CalledOnOwner());
}

TEST(ThreadCheckerTest, BindToCurrentThreadReplacesTheOwner) {
  ThreadChecker checker;
  std::thread other([&] { checker.BindToCurrentThread(); });
  other.join();
  EXPECT_FALSE(checker.CalledOnOwner());
  checker.BindToCurrentThread();
  EXPECT_TRUE(checker.CalledOnOwner());
}

#ifndef NDEBUG
TEST(ThreadCheckerDeathTest, AssertOnOwnerFromAnotherThreadAborts) {
  // "threadsafe" re-executes the test binary for the child instead of
  // forking a process that has threads.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ThreadChecker checker;
  checker.BindToCurrentThread();
  EXPECT_DEATH(
      {
        std::thread other([&] { checker.AssertOnOwner(); });
        other.join();
      },
      "CalledOnOwner");
}
#endif  // NDEBUG

}  // namespace
}  // namespace tailgate::hedge
