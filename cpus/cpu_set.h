// CPU sets for --cpus and pinning the process to one.
//
// Why pin: a read passes between the sidecar's threads several times (the
// gRPC thread hands it to the engine loop, the loop answers through gRPC),
// and on a small virtual machine waking a thread on another vCPU costs
// about ten times what it costs on the same one (docs/TUNING.md). A sidecar
// pinned to one CPU keeps those hand-offs on it, as a pod sidecar with an
// exclusive CPU runs anyway; the price is that it uses one core at most.
//
// Thread safety: ParseCpuList and FormatCpuList are pure; AllowedCpus,
// CpusToUse and PinThisThread act on the calling thread.

#ifndef TAILGATE_CPUS_CPU_SET_H_
#define TAILGATE_CPUS_CPU_SET_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tailgate::server {

// CPU numbers are below this (Linux's largest NR_CPUS).
inline constexpr int kMaxCpus = 8192;

// The CPUs `text` names, ascending and without repeats: comma-separated
// numbers and ranges ("0-2,5"; no strides). INVALID_ARGUMENT, saying what
// is wrong, for an empty list or item, a reversed range, or a CPU number
// of kMaxCpus or more.
absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text);

// Ascending CPUs as the shortest list ParseCpuList reads back the same:
// {0, 1, 2, 5} -> "0-2,5".
std::string FormatCpuList(const std::vector<int>& cpus);

// The CPUs the calling thread may run on now (sched_getaffinity).
absl::StatusOr<std::vector<int>> AllowedCpus();

// What a --cpus value asks for: "any" (or "") is no pinning (empty);
// "last" is the highest-numbered CPU the process may use, which works in
// whatever cpuset a container is given; otherwise a CPU list, each of whose
// CPUs the process must be allowed to use. INVALID_ARGUMENT on one line
// otherwise ("CPU 3 is not one this process may use (0-1)").
absl::StatusOr<std::vector<int>> CpusToUse(absl::string_view text);

// Restricts the calling thread, and every thread it starts from now on, to
// `cpus`. REQUIRES: `cpus` non-empty, each below kMaxCpus. Call it before
// the process starts its other threads.
absl::Status PinThisThread(const std::vector<int>& cpus);

}  // namespace tailgate::server

#endif  // TAILGATE_CPUS_CPU_SET_H_
