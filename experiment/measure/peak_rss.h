// The resident set of a running process, from /proc/PID/status: VmHWM
// (the peak, which the throughput and overload scenarios report for the
// sidecar) and VmRSS (now, which the overload scenario samples); and any
// other number of that file.
//
// Thread safety: reads procfs; no shared state.

#ifndef TAILGATE_EXPERIMENT_MEASURE_PEAK_RSS_H_
#define TAILGATE_EXPERIMENT_MEASURE_PEAK_RSS_H_

#include <sys/types.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tailgate::experiment {

// The number on the `field` line of /proc/PID/status ("VmRSS", "Threads"),
// in the line's own unit (KiB for the Vm and Rss figures).
absl::StatusOr<int64_t> ProcStatusNumber(pid_t pid, absl::string_view field);

// In KiB. REQUIRES: `pid` is running (a zombie has neither figure).
absl::StatusOr<int64_t> PeakRssKib(pid_t pid);   // VmHWM
absl::StatusOr<int64_t> ResidentKib(pid_t pid);  // VmRSS

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_MEASURE_PEAK_RSS_H_
