// StopChildren and ChildrenOf against real child processes: a child that
// exits on SIGTERM, one that ignores it (killed after the grace), one
// already reaped by its owner, and /proc's view of who is whose child.

#include "experiment/stop_children.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/process/child_process.h"

namespace tailgate::experiment {
namespace {

// Runs `sh -c script` as a child of this process and returns once the
// script has written a line with "ready" to stdout (that line in `line`).
std::unique_ptr<testing::ChildProcess> Spawn(const std::string& script,
                                             std::string* line = nullptr) {
  testing::ChildOptions options;
  options.argv = {"sh", "-c", script};
  options.stdout_to = testing::Output::Capture();
  absl::StatusOr<std::unique_ptr<testing::ChildProcess>> child =
      testing::ChildProcess::Start(std::move(options));
  if (!child.ok()) return nullptr;
  std::optional<std::string> ready = (*child)->WaitForLine(
      testing::Stream::kStdout, "ready", absl::Seconds(10));
  if (!ready.has_value()) return nullptr;
  if (line != nullptr) *line = *ready;
  return *std::move(child);
}

bool Contains(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

// Reaps `child` (StopChildren does not) and returns the signal that ended
// it, or 0 if it exited.
int ReapSignal(testing::ChildProcess& child) {
  const std::optional<int> code = child.Wait(absl::Seconds(30));
  EXPECT_TRUE(code.has_value());
  return code.value_or(0) > 128 ? *code - 128 : 0;
}

TEST(StopChildrenTest, ChildrenOfListsChildrenNotGrandchildren) {
  std::string ready;
  const std::unique_ptr<testing::ChildProcess> child =
      Spawn("sleep 60 >/dev/null & echo ready $!; wait", &ready);
  ASSERT_NE(child, nullptr);
  int grandchild = 0;
  ASSERT_TRUE(absl::SimpleAtoi(ready.substr(ready.find(' ') + 1), &grandchild))
      << ready;

  const std::vector<pid_t> children = ChildrenOf(getpid());
  EXPECT_TRUE(Contains(children, child->pid()));
  EXPECT_FALSE(Contains(children, grandchild));
  EXPECT_TRUE(Contains(ChildrenOf(child->pid()), grandchild));

  kill(grandchild, SIGKILL);  // sh's own child: sh then exits
  StopChildren({child->pid()}, absl::Seconds(5));
  ReapSignal(*child);
}

TEST(StopChildrenTest, AChildThatExitsOnSigtermIsStoppedWithinTheGrace) {
  const std::unique_ptr<testing::ChildProcess> child =
      Spawn("echo ready; exec sleep 60 >/dev/null");
  ASSERT_NE(child, nullptr);
  const absl::Time start = absl::Now();
  StopChildren({child->pid()}, absl::Seconds(30));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));  // did not use it up
  EXPECT_EQ(ReapSignal(*child), SIGTERM);
}

TEST(StopChildrenTest, AChildThatIgnoresSigtermIsKilledAfterTheGrace) {
  // `trap '' TERM` is inherited by sleep across exec.
  const std::unique_ptr<testing::ChildProcess> child =
      Spawn("trap '' TERM; echo ready; exec sleep 60 >/dev/null");
  ASSERT_NE(child, nullptr);
  const absl::Time start = absl::Now();
  StopChildren({child->pid()}, absl::Milliseconds(300));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_EQ(ReapSignal(*child), SIGKILL);
}

TEST(StopChildrenTest, APidNoLongerAChildIsLeftAlone) {
  const std::unique_ptr<testing::ChildProcess> child =
      Spawn("echo ready; exit 0");
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(ReapSignal(*child), 0);  // its owner reaped it
  const absl::Time start = absl::Now();
  StopChildren({child->pid(), 0, -1},
               absl::Seconds(30));  // no kill(0, ...) either
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

}  // namespace
}  // namespace tailgate::experiment
