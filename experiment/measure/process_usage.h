// ProcessUsage: what a running process costs now, from procfs: CPU time
// used so far (utime + stime of /proc/PID/stat, every thread), resident
// memory split into anonymous and file-backed pages, and its thread count.
// The cost scenario samples the sidecar before and after each run.
//
// Thread safety: reads procfs; no shared state.

#ifndef TAILGATE_EXPERIMENT_MEASURE_PROCESS_USAGE_H_
#define TAILGATE_EXPERIMENT_MEASURE_PROCESS_USAGE_H_

#include <sys/types.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tailgate::experiment {

struct ProcessUsage {
  absl::Duration cpu;  // user + system, since the process started
  int64_t rss_kib = 0;
  int64_t rss_anon_kib = 0;  // heap, stacks, copied-on-write pages
  int64_t rss_file_kib = 0;  // mapped files: mostly shared libraries' code
  int64_t threads = 0;
};

// REQUIRES: `pid` is running (not a zombie).
absl::StatusOr<ProcessUsage> ReadProcessUsage(pid_t pid);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_MEASURE_PROCESS_USAGE_H_
