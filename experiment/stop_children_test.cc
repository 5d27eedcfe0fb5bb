// StopChildren and ChildrenOf against real child processes: a child that
// exits on SIGTERM, one that ignores it (killed after the grace), and
// /proc's view of who is whose child.

#include "experiment/stop_children.h"

#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/e2e/shell_like_spawn.h"

extern char** environ;

namespace tailgate::experiment {
namespace {

// Runs `sh -c script` as a child of this process and returns once the
// script has written its first byte to stdout (or exited).
pid_t Spawn(const std::string& script) {
  int ready[2];
  EXPECT_EQ(pipe(ready), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ready[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, ready[0]);
  std::string sh = "sh", c = "-c", text = script;
  char* argv[] = {sh.data(), c.data(), text.data(), nullptr};
  const testing::ShellLikeSpawnAttr attr;
  pid_t pid = 0;
  EXPECT_EQ(posix_spawnp(&pid, "sh", &actions, attr.get(), argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(ready[1]);
  char byte;
  EXPECT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  return pid;
}

bool Exists(pid_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

bool Contains(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

TEST(StopChildrenTest, ChildrenOfListsThisProcesssChildrenOnly) {
  const pid_t child = Spawn("echo; exec sleep 60 >/dev/null");
  const std::vector<pid_t> children = ChildrenOf(getpid());
  EXPECT_TRUE(Contains(children, child));
  EXPECT_FALSE(Contains(children, getpid()));
  EXPECT_FALSE(Contains(ChildrenOf(child), child));
  StopChildren({child}, absl::Seconds(5));
}

TEST(StopChildrenTest, AChildThatExitsOnSigtermIsReapedWithinTheGrace) {
  const pid_t child = Spawn("echo; exec sleep 60 >/dev/null");
  const absl::Time start = absl::Now();
  StopChildren({child}, absl::Seconds(30));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));  // did not use it up
  EXPECT_FALSE(Exists(child));  // reaped, not a zombie
  EXPECT_FALSE(Contains(ChildrenOf(getpid()), child));
}

TEST(StopChildrenTest, AChildThatIgnoresSigtermIsKilledAfterTheGrace) {
  // `trap '' TERM` is inherited by sleep across exec.
  const pid_t child = Spawn("trap '' TERM; echo; exec sleep 60 >/dev/null");
  const absl::Time start = absl::Now();
  StopChildren({child}, absl::Milliseconds(300));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_FALSE(Exists(child));
}

}  // namespace
}  // namespace tailgate::experiment
