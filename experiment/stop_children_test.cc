// StopChildren and ChildrenOf against real child processes: a child that
// exits on SIGTERM, one that ignores it (killed after the grace), one
// already reaped by its owner, and /proc's view of who is whose child.

#include "experiment/stop_children.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/e2e/shell_like_spawn.h"

extern char** environ;

namespace tailgate::experiment {
namespace {

// Runs `sh -c script` as a child of this process and returns once the
// script has written its first line to stdout (returned in `line`).
std::optional<pid_t> Spawn(const std::string& script,
                           std::string* line = nullptr) {
  int ready[2];
  if (pipe(ready) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ready[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, ready[0]);
  std::string sh = "sh", c = "-c", text = script;
  char* argv[] = {sh.data(), c.data(), text.data(), nullptr};
  const testing::ShellLikeSpawnAttr attr;
  pid_t pid = 0;
  const int error =
      posix_spawnp(&pid, "sh", &actions, attr.get(), argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(ready[1]);
  std::string got;
  char byte;
  while (error == 0 && read(ready[0], &byte, 1) == 1 && byte != '\n') {
    got.push_back(byte);
  }
  close(ready[0]);
  if (error != 0) return std::nullopt;
  if (line != nullptr) *line = got;
  return pid;
}

bool Contains(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

// Reaps `child` (StopChildren does not) and returns the signal that ended
// it, or 0 if it exited.
int ReapSignal(pid_t child) {
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

TEST(StopChildrenTest, ChildrenOfListsChildrenNotGrandchildren) {
  std::string grandchild_text;
  const std::optional<pid_t> child =
      Spawn("sleep 60 >/dev/null & echo $!; wait", &grandchild_text);
  ASSERT_TRUE(child.has_value());
  int grandchild = 0;
  ASSERT_TRUE(absl::SimpleAtoi(grandchild_text, &grandchild));

  const std::vector<pid_t> children = ChildrenOf(getpid());
  EXPECT_TRUE(Contains(children, *child));
  EXPECT_FALSE(Contains(children, grandchild));
  EXPECT_TRUE(Contains(ChildrenOf(*child), grandchild));

  kill(grandchild, SIGKILL);  // sh's own child: sh then exits
  StopChildren({*child}, absl::Seconds(5));
  ReapSignal(*child);
}

TEST(StopChildrenTest, AChildThatExitsOnSigtermIsStoppedWithinTheGrace) {
  const std::optional<pid_t> child = Spawn("echo; exec sleep 60 >/dev/null");
  ASSERT_TRUE(child.has_value());
  const absl::Time start = absl::Now();
  StopChildren({*child}, absl::Seconds(30));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));  // did not use it up
  EXPECT_EQ(ReapSignal(*child), SIGTERM);
}

TEST(StopChildrenTest, AChildThatIgnoresSigtermIsKilledAfterTheGrace) {
  // `trap '' TERM` is inherited by sleep across exec.
  const std::optional<pid_t> child =
      Spawn("trap '' TERM; echo; exec sleep 60 >/dev/null");
  ASSERT_TRUE(child.has_value());
  const absl::Time start = absl::Now();
  StopChildren({*child}, absl::Milliseconds(300));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_EQ(ReapSignal(*child), SIGKILL);
}

TEST(StopChildrenTest, APidNoLongerAChildIsLeftAlone) {
  const std::optional<pid_t> child = Spawn("echo; exit 0");
  ASSERT_TRUE(child.has_value());
  EXPECT_EQ(ReapSignal(*child), 0);  // its owner reaped it
  const absl::Time start = absl::Now();
  StopChildren({*child, 0, -1}, absl::Seconds(30));  // no kill(0, ...) either
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

}  // namespace
}  // namespace tailgate::experiment
