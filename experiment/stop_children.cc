#include "experiment/stop_children.h"

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "experiment/load/progress.h"
#include "tests/process/child_process.h"

namespace tailgate::experiment {
namespace {

// Through syscall(): the C declarations of Debian 12's <sys/pidfd.h>
// are not C++-linkable (no extern "C").
int PidfdOpen(pid_t pid) {
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
}
void PidfdSignal(int pidfd, int signal) {
  syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0);
}

// Rounds of look-and-stop, for children started while the last were
// stopped (the experiment's threads run on meanwhile).
constexpr int kMaxRounds = 5;

// Set by the signal thread when a stop signal arrives.
std::atomic<bool> stopping{false};

sigset_t StopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, signal);
  return signals;
}

// Whether a stop is under way, or its signal pending.
bool Signalled() {
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  bool signalled = stopping.load();
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    signalled = signalled || sigismember(&pending, signal) == 1;
  }
  return signalled;
}

// exit() from any thread while a stop is under way (or its signal is
// pending) waits for the signal thread to end the process by the signal.
void WaitForTheStopAtExit() {
  if (!Signalled()) return;
  for (;;) pause();
}

// The parent pid in /proc/PID/stat, or -1. The command name (field 2) is
// in parentheses and may hold spaces and parentheses itself: the fields
// after it start at the last ')'.
pid_t ParentOf(const std::string& pid) {
  // A process may exit between the directory listing and this read (which
  // then fails with ESRCH): it is no child then.
  const std::string stat =
      testing::ReadWholeFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t end_of_name = stat.rfind(')');
  if (end_of_name == std::string::npos) return -1;
  // After ") ": state, then the parent's pid.
  const std::vector<std::string> fields =
      absl::StrSplit(stat.substr(end_of_name + 1), ' ', absl::SkipEmpty());
  int parent = -1;
  if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &parent)) return -1;
  return parent;
}

// A pidfd of `pid` if it is (still) a child of this process, else -1.
// Checked after the pidfd is taken: a pid reaped and reused before that
// would be another process's child, and the pidfd pins the process.
int ChildPidfd(pid_t pid) {
  if (pid <= 0) return -1;
  const int fd = PidfdOpen(pid);
  if (fd < 0) return -1;
  if (ParentOf(absl::StrCat(pid)) != getpid()) {
    close(fd);
    return -1;
  }
  return fd;
}

// Whether the process behind `pidfd` has exited (readable once it has)
// within `wait`, rounded up to poll's milliseconds: never less.
bool Exited(int pidfd, absl::Duration wait) {
  pollfd exited{pidfd, POLLIN, 0};
  const int64_t ms =
      absl::ToInt64Milliseconds(absl::Ceil(wait, absl::Milliseconds(1)));
  return poll(&exited, 1, static_cast<int>(ms)) > 0;
}

void WaitAndStop() {
  const sigset_t signals = StopSignals();
  int signal = 0;
  if (sigwait(&signals, &signal) != 0) return;
  stopping.store(true);
  // No program starts from here on: one started after the last look below
  // would outlive the experiment.
  testing::StopSpawning();
  Note(absl::StrCat("signal ", signal, ": stopping the programs it ran"));
  for (int round = 0; round < kMaxRounds; ++round) {
    const std::vector<pid_t> children = ChildrenOf(getpid());
    if (children.empty()) break;
    StopChildren(children, kStopSignalGrace);
  }
  // Ends the process by the same signal: the default action, unblocked in
  // this thread.
  std::signal(signal, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, signal);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(signal);
  std::_Exit(128 + signal);  // not reached
}

}  // namespace

std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (const dirent* entry = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    if (ParentOf(entry->d_name) == parent) children.push_back(pid);
  }
  closedir(proc);
  return children;
}

void StopChildren(const std::vector<pid_t>& children, absl::Duration grace) {
  std::vector<int> pidfds;
  for (pid_t child : children) {
    const int pidfd = ChildPidfd(child);
    if (pidfd < 0) continue;
    PidfdSignal(pidfd, SIGTERM);
    pidfds.push_back(pidfd);
  }
  const absl::Time limit = absl::Now() + grace;
  for (int pidfd : pidfds) {
    if (!Exited(pidfd, std::max(limit - absl::Now(), absl::ZeroDuration()))) {
      PidfdSignal(pidfd, SIGKILL);
      Exited(pidfd, absl::Seconds(1));
    }
    close(pidfd);
  }
}

int ExitCodeUnlessStopping(int code) {
  WaitForTheStopAtExit();
  return code;
}

void StopChildrenOnSignal() {
  const sigset_t signals = StopSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::atexit(WaitForTheStopAtExit);
  std::thread(WaitAndStop).detach();
}

}  // namespace tailgate::experiment
