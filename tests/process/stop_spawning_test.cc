// StopSpawning is for good and process-wide: a test binary of its own.

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/process/child_process.h"

namespace tailgate::testing {
namespace {

TEST(StopSpawningTest, NothingStartsAfterIt) {
  ChildOptions before;
  before.argv = {"true"};
  absl::StatusOr<ChildResult> ran = RunToExit(before);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_EQ(ran->exit_code, 0);

  StopSpawning();
  ChildOptions after;
  after.argv = {"true"};
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start(after);
  EXPECT_EQ(child.status().code(), absl::StatusCode::kCancelled);
  EXPECT_NE(child.status().message().find("true"), absl::string_view::npos)
      << child.status();
}

}  // namespace
}  // namespace tailgate::testing
