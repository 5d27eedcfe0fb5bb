#include "server/sched_policy.h"

#include <thread>

#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

TEST(ParseSchedPolicyTest, BatchOrNormal) {
  EXPECT_EQ(ParseSchedPolicy("batch").value(), SchedPolicy::kBatch);
  EXPECT_EQ(ParseSchedPolicy("normal").value(), SchedPolicy::kNormal);
  EXPECT_EQ(SchedPolicyName(SchedPolicy::kBatch), "batch");
  EXPECT_EQ(SchedPolicyName(SchedPolicy::kNormal), "normal");
}

TEST(ParseSchedPolicyTest, NamesTheChoices) {
  for (const char* bad : {"", "Batch", "fifo", "batch ", "idle"}) {
    const absl::StatusOr<SchedPolicy> policy = ParseSchedPolicy(bad);
    ASSERT_FALSE(policy.ok()) << bad;
    EXPECT_EQ(policy.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(policy.status().message(),
              std::string("must be batch or normal, got \"") + bad + "\"");
  }
}

// The policy applies to the calling thread and to the threads it starts
// afterwards, not to threads that already run.
TEST(SetThisThreadPolicyTest, ThreadsStartedAfterwardsInheritIt) {
  ASSERT_EQ(ThisThreadPolicy().value(), SchedPolicy::kNormal);
  absl::StatusOr<SchedPolicy> in_thread, in_child, in_restored;
  std::thread batch([&] {
    ASSERT_TRUE(SetThisThreadPolicy(SchedPolicy::kBatch).ok());
    in_thread = ThisThreadPolicy();
    std::thread child([&] { in_child = ThisThreadPolicy(); });
    child.join();
    ASSERT_TRUE(SetThisThreadPolicy(SchedPolicy::kNormal).ok());
    in_restored = ThisThreadPolicy();
  });
  batch.join();
  EXPECT_EQ(in_thread.value(), SchedPolicy::kBatch);
  EXPECT_EQ(in_child.value(), SchedPolicy::kBatch);
  EXPECT_EQ(in_restored.value(), SchedPolicy::kNormal);
  // The test's own thread was left alone.
  EXPECT_EQ(ThisThreadPolicy().value(), SchedPolicy::kNormal);
}

}  // namespace
}  // namespace tailgate::server
