// The Linux scheduling policy of the sidecar's threads (--sched_policy).
//
// Why: a read crosses threads twice in the sidecar (a gRPC thread hands it
// to the engine loop; the loop answers through gRPC, which wakes gRPC's
// poller threads). Under the default policy (SCHED_OTHER) a thread woken
// on the CPU of the thread that woke it usually preempts it, so every
// answer the engine loop gives costs it a switch out and back, and on a
// virtual machine a context switch is expensive (docs/BENCHMARKS.md,
// throughput). A SCHED_BATCH thread never preempts on wake-up; it runs
// when the CPU is free or its turn comes.
//
// With kBatch, the main thread turns SCHED_BATCH after the engine has
// started its loop, so the threads gRPC and the HTTP listener start
// inherit it, while the loop keeps the policy the process started with
// and, woken by a due hedge timer, may still preempt under the kernel's
// usual rules. Threads the loop itself starts (libcurl's resolver, for
// host names) inherit the loop's policy. kNormal changes nothing.
//
// Thread safety: ParseSchedPolicy and SchedPolicyName are pure;
// SetThisThreadPolicy and ThisThreadPolicy act on the calling thread.

#ifndef TAILGATE_SERVER_PROCESS_SCHED_POLICY_H_
#define TAILGATE_SERVER_PROCESS_SCHED_POLICY_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tailgate::server {

enum class SchedPolicy {
  kNormal,  // SCHED_OTHER
  kBatch,   // SCHED_BATCH
};

// "normal" or "batch"; INVALID_ARGUMENT naming the choices otherwise.
absl::StatusOr<SchedPolicy> ParseSchedPolicy(absl::string_view text);

absl::string_view SchedPolicyName(SchedPolicy policy);

// Gives the calling thread `policy` (static priority 0, which both need);
// threads it starts from now on inherit it. Needs no privilege.
absl::Status SetThisThreadPolicy(SchedPolicy policy);

// The calling thread's policy; an error for any other (a real-time one).
absl::StatusOr<SchedPolicy> ThisThreadPolicy();

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_PROCESS_SCHED_POLICY_H_
