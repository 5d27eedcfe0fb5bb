// CPU lists for --cpus ("1", "0-1,3": taskset -c syntax) and pinning the
// process to one.
//
// Why pin: a read passes between the sidecar's threads several times (the
// gRPC thread hands it to the engine loop, the loop answers through gRPC),
// and on a small virtual machine waking a thread on another vCPU costs
// about ten times what it costs on the same one (docs/BENCHMARKS.md,
// seventh series). A sidecar pinned to one CPU keeps those hand-offs on
// it, as a pod sidecar with an exclusive CPU runs anyway; the price is
// that it uses one core at most.
//
// Thread safety: ParseCpuList and FormatCpuList are pure; AllowedCpus and
// PinThisThread act on the calling thread.

#ifndef TAILGATE_SERVER_CPU_SET_H_
#define TAILGATE_SERVER_CPU_SET_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tailgate::server {

// The CPUs `text` names, ascending and without repeats: comma-separated
// numbers and ranges ("0-2,5"). INVALID_ARGUMENT, saying what is wrong, for
// an empty list or item, a reversed range, or a CPU at or above MaxCpus().
absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text);

// The highest CPU number ParseCpuList accepts, plus one (the kernel's
// CPU_SETSIZE).
int MaxCpus();

// Ascending CPUs as the shortest list ParseCpuList reads back the same:
// {0, 1, 2, 5} -> "0-2,5".
std::string FormatCpuList(const std::vector<int>& cpus);

// The CPUs the calling thread may run on now (sched_getaffinity).
absl::StatusOr<std::vector<int>> AllowedCpus();

// Restricts the calling thread, and every thread it starts from now on, to
// `cpus`. REQUIRES: `cpus` non-empty and valid (ParseCpuList). Call it
// before the process starts its other threads.
absl::Status PinThisThread(const std::vector<int>& cpus);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CPU_SET_H_
