// StopChildrenOnSignal: when the experiment is told to stop (SIGINT,
// SIGTERM, SIGHUP), the programs it started (sidecars, nginx, h2load, a
// peer gateway) stop with it instead of running on, orphaned, on the CPUs
// the next run measures.
//
// The signals are blocked in the calling thread, and so in every thread
// it starts afterwards, and taken by a thread of their own. That thread
// stops ChildProcess from starting anything more (testing::StopSpawning),
// sends SIGTERM to each child of this process (found in /proc, so every
// spawner's children are covered), gives them kStopSignalGrace to exit,
// SIGKILLs the rest, looks again for children started meanwhile, and then
// ends the process by the same signal, as if it had never been caught
// (exit status 128 + signal). A sidecar that is still draining when the
// grace ends (its --drain_timeout is longer) is killed.
//
// Meanwhile the rest of the experiment, seeing its children go, may try
// to exit: exit() waits for that end instead (an atexit handler), also
// when the signal is still pending (a Ctrl-C reaches the children too,
// which may die before the signal thread has taken it).
//
// Children are never reaped here: their owners (ChildProcess,
// TailgateProcess, RunGnuplot) reap them, and a child is reached through a
// pidfd, so a pid reaped and reused meanwhile is never signalled.
//
// Example (first thing in main, before any thread is started):
//   tailgate::experiment::StopChildrenOnSignal();
//
// Thread safety: StopChildrenOnSignal once, from main; the others from
// any thread.

#ifndef TAILGATE_EXPERIMENT_STOP_CHILDREN_H_
#define TAILGATE_EXPERIMENT_STOP_CHILDREN_H_

#include <sys/types.h>

#include <vector>

#include "absl/time/time.h"

namespace tailgate::experiment {

inline constexpr absl::Duration kStopSignalGrace = absl::Seconds(3);

void StopChildrenOnSignal();

// `code`, for main to return, unless a stop is under way or its signal is
// pending: then it waits for the signal thread to end the process, and
// never returns. Static objects are destroyed by exit() before the atexit
// handler that would wait runs (they were made after it was registered),
// while the signal thread and the libraries' threads still run: main must
// not return while a stop is under way.
int ExitCodeUnlessStopping(int code);

// The processes whose parent is `parent` (zombies included), from /proc.
std::vector<pid_t> ChildrenOf(pid_t parent);

// Sends SIGTERM to each of `children` that is still a child of this
// process, then SIGKILL to those that have not exited after `grace`.
// Returns once each has exited (or after `grace` and the SIGKILLs); reaps
// none. Pids of 0 or less are skipped.
void StopChildren(const std::vector<pid_t>& children, absl::Duration grace);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_STOP_CHILDREN_H_
