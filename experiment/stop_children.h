// StopChildrenOnSignal: when the experiment is told to stop (SIGINT,
// SIGTERM, SIGHUP), the programs it started (sidecars, nginx, h2load, a
// peer gateway) stop with it instead of running on, orphaned, on the CPUs
// the next run measures.
//
// The signals are blocked in every thread and taken by a thread of their
// own, which sends SIGTERM to each child of this process (found in /proc,
// so every spawner's children are covered), gives them `kGrace` to exit
// (a sidecar drains), SIGKILLs the rest, and then ends the process by the
// same signal, as if it had never been caught (exit status 128 + signal).
// Meanwhile the rest of the experiment, seeing its children go, may try to
// exit: exit() waits for that end instead (an atexit handler).
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

inline constexpr absl::Duration kGrace = absl::Seconds(3);

void StopChildrenOnSignal();

// The processes whose parent is `parent` (zombies included), from /proc.
std::vector<pid_t> ChildrenOf(pid_t parent);

// SIGTERM to each of `children` (of this process), then SIGKILL to those
// not exited after `grace`; reaps them all before returning.
void StopChildren(const std::vector<pid_t>& children, absl::Duration grace);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_STOP_CHILDREN_H_
