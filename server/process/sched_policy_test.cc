#include "server/process/sched_policy.h"

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
  const absl::StatusOr<SchedPolicy> original = ThisThreadPolicy();
  ASSERT_TRUE(original.ok()) << original.status();
  absl::Status set_batch, set_normal;
  absl::StatusOr<SchedPolicy> in_thread, in_child, in_restored;
  std::thread batch([&] {
    set_batch = SetThisThreadPolicy(SchedPolicy::kBatch);
    in_thread = ThisThreadPolicy();
    std::thread child([&] { in_child = ThisThreadPolicy(); });
    child.join();
    set_normal = SetThisThreadPolicy(SchedPolicy::kNormal);
    in_restored = ThisThreadPolicy();
  });
  batch.join();
  ASSERT_TRUE(set_batch.ok()) << set_batch;
  ASSERT_TRUE(set_normal.ok()) << set_normal;
  ASSERT_TRUE(in_thread.ok() && in_child.ok() && in_restored.ok());
  EXPECT_EQ(*in_thread, SchedPolicy::kBatch);
  EXPECT_EQ(*in_child, SchedPolicy::kBatch);
  EXPECT_EQ(*in_restored, SchedPolicy::kNormal);
  // The test's own thread was left alone.
  EXPECT_EQ(ThisThreadPolicy().value(), *original);
}

}  // namespace
}  // namespace tailgate::server
