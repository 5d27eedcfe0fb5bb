#include "server/cpu_set.h"

#include <sched.h>

#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

TEST(ParseCpuListTest, NumbersAndRanges) {
  EXPECT_THAT(*ParseCpuList("1"), ElementsAre(1));
  EXPECT_THAT(*ParseCpuList("0-2,5"), ElementsAre(0, 1, 2, 5));
  EXPECT_THAT(*ParseCpuList("3,1,1,2-3"), ElementsAre(1, 2, 3));
  EXPECT_THAT(*ParseCpuList("4-4"), ElementsAre(4));
}

TEST(ParseCpuListTest, TheHighestCpuIsJustBelowMaxCpus) {
  const std::string last = std::to_string(MaxCpus() - 1);
  EXPECT_THAT(*ParseCpuList(last), ElementsAre(MaxCpus() - 1));
  absl::StatusOr<std::vector<int>> over =
      ParseCpuList(std::to_string(MaxCpus()));
  EXPECT_EQ(over.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(over.status().message(), HasSubstr("is not below"));
}

TEST(ParseCpuListTest, RejectsWhatIsNotAList) {
  for (const char* text :
       {"", ",", "1,", ",1", "a", "1-", "-1", "+1", "1--2", "1-a", "0x1", " 1",
        "1 ", "1.5", "99999999999999999999"}) {
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(text);
    EXPECT_EQ(cpus.status().code(), absl::StatusCode::kInvalidArgument)
        << "\"" << text << "\"";
  }
  EXPECT_THAT(ParseCpuList("x").status().message(),
              HasSubstr("\"x\" in \"x\" is not a CPU number"));
  EXPECT_THAT(ParseCpuList("").status().message(), HasSubstr("empty list"));
}

TEST(ParseCpuListTest, RejectsABackwardRange) {
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList("0,3-1");
  EXPECT_EQ(cpus.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cpus.status().message(),
              HasSubstr("the range \"3-1\" in \"0,3-1\" runs backwards"));
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

// The pin applies to the calling thread and to the threads it starts.
TEST(PinThisThreadTest, ThreadsStartedAfterwardsInheritThePin) {
  absl::StatusOr<std::vector<int>> allowed = AllowedCpus();
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  ASSERT_THAT(*allowed, Not(IsEmpty()));
  const int cpu = allowed->back();
  std::vector<int> in_pinned, in_child;
  int ran_on = -1;
  std::thread pinned([&] {
    ASSERT_TRUE(PinThisThread({cpu}).ok());
    in_pinned = *AllowedCpus();
    ran_on = sched_getcpu();
    std::thread child([&] { in_child = *AllowedCpus(); });
    child.join();
  });
  pinned.join();
  EXPECT_THAT(in_pinned, ElementsAre(cpu));
  EXPECT_THAT(in_child, ElementsAre(cpu));
  EXPECT_EQ(ran_on, cpu);
  // The test's own thread was left alone.
  EXPECT_EQ(*AllowedCpus(), *allowed);
}

TEST(PinThisThreadTest, ACpuOutsideTheMachineFails) {
  std::thread pinned([] {
    // No machine this test runs on has every CPU number up to the limit.
    const absl::Status status = PinThisThread({MaxCpus() - 1});
    EXPECT_FALSE(status.ok());
    EXPECT_THAT(status.message(), HasSubstr("sched_setaffinity("));
  });
  pinned.join();
}

}  // namespace
}  // namespace tailgate::server
