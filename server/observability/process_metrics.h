// The process_* series every Prometheus client library exports, read from
// /proc (Debian's prometheus-cpp has no process collector):
//
//   process_cpu_seconds_total      user + system CPU time (/proc/self/stat)
//   process_resident_memory_bytes  resident set size (/proc/self/stat)
//   process_virtual_memory_bytes   virtual memory size (/proc/self/stat)
//   process_start_time_seconds     start, seconds since the Unix epoch
//                                  (/proc/self/stat and btime, /proc/stat)
//   process_open_fds               open file descriptors (/proc/self/fd,
//                                  without the one that lists it)
//   process_max_fds                the soft limit on them
//                                  (/proc/self/limits, "Max open files")
//
// Thread safety: ReadProcessStats reads files only; safe from any thread.

#ifndef TAILGATE_SERVER_OBSERVABILITY_PROCESS_METRICS_H_
#define TAILGATE_SERVER_OBSERVABILITY_PROCESS_METRICS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"

namespace tailgate::server {

struct ProcessStats {
  double cpu_seconds = 0;
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double start_time_seconds = 0;
  double open_fds = 0;
  double max_fds = 0;  // +Inf when unlimited
};

// Where ReadProcessStats looks: a process's /proc directory and the
// system-wide /proc/stat. Tests point them at files of their own.
struct ProcFiles {
  std::string process = "/proc/self";
  std::string system_stat = "/proc/stat";
};

// An error names the file that could not be read or parsed.
absl::StatusOr<ProcessStats> ReadProcessStats(const ProcFiles& files = {});

// The families above, one sample each.
std::vector<prometheus::MetricFamily> ProcessFamilies(
    const ProcessStats& stats);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_OBSERVABILITY_PROCESS_METRICS_H_
