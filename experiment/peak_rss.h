// The resident set of a running process, from /proc/PID/status: VmHWM
// (the peak, which the throughput and overload scenarios report for the
// sidecar) and VmRSS (now, which the overload scenario samples).
//
// Thread safety: reads procfs; no shared state.

#ifndef TAILGATE_EXPERIMENT_PEAK_RSS_H_
#define TAILGATE_EXPERIMENT_PEAK_RSS_H_

#include <sys/types.h>

#include <cstdint>

#include "absl/status/statusor.h"

namespace tailgate::experiment {

// In KiB. REQUIRES: `pid` is running (a zombie has neither figure).
absl::StatusOr<int64_t> PeakRssKib(pid_t pid);   // VmHWM
absl::StatusOr<int64_t> ResidentKib(pid_t pid);  // VmRSS

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_PEAK_RSS_H_
