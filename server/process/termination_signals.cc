#include "server/process/termination_signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <thread>

namespace tailgate::server {
namespace {

// The signals taken with sigwait: the termination signals and SIGHUP.
sigset_t AwaitedSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void BlockTerminationSignals() {
  const sigset_t set = AwaitedSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int AwaitTerminationSignal(absl::FunctionRef<void()> on_hangup) {
  const sigset_t set = AwaitedSet();
  while (true) {
    int signal = 0;
    if (sigwait(&set, &signal) != 0) continue;
    if (signal != SIGHUP) return signal;
    on_hangup();
  }
}

void ExitOnNextTerminationSignal() {
  std::thread([] { _exit(128 + AwaitTerminationSignal()); }).detach();
}

}  // namespace tailgate::server
