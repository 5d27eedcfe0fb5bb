#include "experiment/stop_children.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kPollStep = absl::Milliseconds(10);

// Set by the signal thread when a stop signal arrives. The rest of the
// experiment sees its children die and may try to exit meanwhile (with
// code 1, a sidecar having vanished): exit() then waits here for the
// signal thread to end the process by the signal.
std::atomic<bool> stopping{false};

void WaitForTheStopAtExit() {
  if (!stopping.load()) return;
  for (;;) pause();
}

sigset_t StopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, signal);
  return signals;
}

// The parent pid in /proc/PID/stat, or -1. The command name (field 2) is
// in parentheses and may hold spaces and parentheses itself: the fields
// after it start at the last ')'.
pid_t ParentOf(const std::string& pid) {
  std::ifstream file(absl::StrCat("/proc/", pid, "/stat"));
  const std::string stat((std::istreambuf_iterator<char>(file)),
                         std::istreambuf_iterator<char>());
  const size_t end_of_name = stat.rfind(')');
  if (end_of_name == std::string::npos) return -1;
  // After ") ": state, then the parent's pid.
  const std::vector<std::string> fields =
      absl::StrSplit(stat.substr(end_of_name + 1), ' ', absl::SkipEmpty());
  int parent = -1;
  if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &parent)) return -1;
  return parent;
}

bool Reap(pid_t child) {
  int status = 0;
  const pid_t got = waitpid(child, &status, WNOHANG);
  // Gone: reaped now, or by someone else, or never ours.
  return got == child || got < 0;
}

void WaitAndStop() {
  const sigset_t signals = StopSignals();
  int signal = 0;
  if (sigwait(&signals, &signal) != 0) return;
  stopping.store(true);
  std::fprintf(stderr, "experiment: signal %d: stopping the programs it ran\n",
               signal);
  StopChildren(ChildrenOf(getpid()), kGrace);
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
  for (pid_t child : children) kill(child, SIGTERM);
  std::vector<pid_t> left = children;
  const absl::Time limit = absl::Now() + grace;
  while (!left.empty()) {
    left.erase(std::remove_if(left.begin(), left.end(), Reap), left.end());
    if (left.empty() || absl::Now() >= limit) break;
    absl::SleepFor(kPollStep);
  }
  for (pid_t child : left) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
  }
}

void StopChildrenOnSignal() {
  const sigset_t signals = StopSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::atexit(WaitForTheStopAtExit);
  std::thread(WaitAndStop).detach();
}

}  // namespace tailgate::experiment
