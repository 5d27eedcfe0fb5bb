#include "cpus/cpu_set.h"

#include <sched.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::vector<int> Allowed() {
  absl::StatusOr<std::vector<int>> allowed = AllowedCpus();
  EXPECT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_THAT(allowed.value_or(std::vector<int>{}), Not(IsEmpty()));
  return allowed.value_or(std::vector<int>{});
}

TEST(ParseCpuListTest, NumbersAndRanges) {
  EXPECT_THAT(*ParseCpuList("1"), ElementsAre(1));
  EXPECT_THAT(*ParseCpuList("0-2,5"), ElementsAre(0, 1, 2, 5));
  EXPECT_THAT(*ParseCpuList("3,1,1,2-3"), ElementsAre(1, 2, 3));
  EXPECT_THAT(*ParseCpuList("4-4"), ElementsAre(4));
}

TEST(ParseCpuListTest, TheHighestCpuIsJustBelowKMaxCpus) {
  EXPECT_THAT(*ParseCpuList(std::to_string(kMaxCpus - 1)),
              ElementsAre(kMaxCpus - 1));
  for (const std::string& text :
       {std::to_string(kMaxCpus), std::string("99999999999999999999")}) {
    absl::StatusOr<std::vector<int>> over = ParseCpuList(text);
    EXPECT_EQ(over.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(over.status().message(),
              absl::StrCat("CPU numbers are below 8192, got ", text));
  }
}

TEST(ParseCpuListTest, RejectsWhatIsNotAList) {
  for (const char* text : {"", ",", "1,", ",1", "a", "1-", "-1", "+1", "1--2",
                           "1-a", "1-2-3", "0x1", " 1", "1 ", "1.5", "0-8:2"}) {
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(text);
    EXPECT_EQ(cpus.status().code(), absl::StatusCode::kInvalidArgument)
        << "\"" << text << "\"";
  }
  EXPECT_EQ(ParseCpuList("0,x").status().message(),
            "\"x\" is not a CPU number");
  EXPECT_EQ(ParseCpuList("").status().message(), "empty CPU list");
}

TEST(ParseCpuListTest, RejectsABackwardRange) {
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList("0,3-1");
  EXPECT_EQ(cpus.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cpus.status().message(), "the range \"3-1\" runs backwards");
}

TEST(FormatCpuListTest, RangesWherePossible) {
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_EQ(FormatCpuList({3}), "3");
  EXPECT_EQ(FormatCpuList({0, 1, 2, 5}), "0-2,5");
  EXPECT_EQ(FormatCpuList({0, 2, 4, 5}), "0,2,4-5");
  for (const char* text : {"0", "0-3", "1,3,5-7"}) {
    EXPECT_EQ(FormatCpuList(*ParseCpuList(text)), text);
  }
}

TEST(CpusToUseTest, AnyLastOrAllowedCpus) {
  const std::vector<int> allowed = Allowed();
  ASSERT_THAT(allowed, Not(IsEmpty()));
  EXPECT_THAT(*CpusToUse(""), IsEmpty());
  EXPECT_THAT(*CpusToUse("any"), IsEmpty());
  EXPECT_THAT(*CpusToUse("last"), ElementsAre(allowed.back()));
  EXPECT_EQ(*CpusToUse(FormatCpuList(allowed)), allowed);
  EXPECT_THAT(*CpusToUse(std::to_string(allowed.front())),
              ElementsAre(allowed.front()));
}

TEST(CpusToUseTest, NamesWhatIsWrong) {
  const std::vector<int> allowed = Allowed();
  // The highest CPU number there is: no machine this runs on lets us use it.
  absl::StatusOr<std::vector<int>> absent =
      CpusToUse(std::to_string(kMaxCpus - 1));
  EXPECT_EQ(absent.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      absent.status().message(),
      absl::StrCat("CPU ", kMaxCpus - 1, " is not one this process may use (",
                   FormatCpuList(allowed), ")"));
  absl::StatusOr<std::vector<int>> bad = CpusToUse("first");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "want any, last or CPUs such as 1 or 0-1,3: \"first\" is not a "
            "CPU number");
}

// The pin applies to the calling thread and to the threads it starts.
TEST(PinThisThreadTest, ThreadsStartedAfterwardsInheritThePin) {
  const std::vector<int> allowed = Allowed();
  if (allowed.size() < 2) GTEST_SKIP() << "one CPU: a pin would not show";
  const int cpu = allowed.back();
  absl::StatusOr<std::vector<int>> in_pinned, in_child;
  int ran_on = -1;
  std::thread pinned([&] {
    ASSERT_TRUE(PinThisThread({cpu}).ok());
    in_pinned = AllowedCpus();
    ran_on = sched_getcpu();
    std::thread child([&] { in_child = AllowedCpus(); });
    child.join();
  });
  pinned.join();
  ASSERT_TRUE(in_pinned.ok()) << in_pinned.status();
  ASSERT_TRUE(in_child.ok()) << in_child.status();
  EXPECT_THAT(*in_pinned, ElementsAre(cpu));
  EXPECT_THAT(*in_child, ElementsAre(cpu));
  EXPECT_EQ(ran_on, cpu);
  // The test's own thread was left alone.
  EXPECT_EQ(Allowed(), allowed);
}

TEST(PinThisThreadTest, ACpuOutsideTheMachineFails) {
  std::thread pinned([] {
    const absl::Status status = PinThisThread({kMaxCpus - 1});
    EXPECT_FALSE(status.ok());
    EXPECT_THAT(status.message(), HasSubstr("sched_setaffinity(8191): "));
  });
  pinned.join();
}

}  // namespace
}  // namespace tailgate::server
