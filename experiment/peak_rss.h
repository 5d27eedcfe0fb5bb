// The peak resident set of a running process: VmHWM in /proc/PID/status,
// the figure the throughput scenario reports for the sidecar.
//
// Thread safety: reads procfs; no shared state.

#ifndef TAILGATE_EXPERIMENT_PEAK_RSS_H_
#define TAILGATE_EXPERIMENT_PEAK_RSS_H_

#include <sys/types.h>

#include <cstdint>

#include "absl/status/statusor.h"

namespace tailgate::experiment {

// In KiB. REQUIRES: `pid` is running (a zombie has no VmHWM).
absl::StatusOr<int64_t> PeakRssKib(pid_t pid);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_PEAK_RSS_H_
