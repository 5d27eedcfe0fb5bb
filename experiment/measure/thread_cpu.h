// ThreadCpu: where a process's CPU time goes, from procfs, without perf:
// user and system time and context switches of each of its threads
// (/proc/PID/task/TID/stat and status), summed by thread name with a
// trailing number dropped ("grpc_global_tim", "default-executo",
// "tailgate-loop-1" -> "tailgate-loop"). The fanout scenario reads it
// around a measured part and reports the difference per key.
//
// Times are in clock ticks (10 ms on most kernels): meaningful over
// seconds of work, not over one batch. A thread that ended between two
// readings takes its time with it.
//
// Thread safety: reads procfs; no shared state.

#ifndef TAILGATE_EXPERIMENT_MEASURE_THREAD_CPU_H_
#define TAILGATE_EXPERIMENT_MEASURE_THREAD_CPU_H_

#include <sys/types.h>

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tailgate::experiment {

struct ThreadGroupCpu {
  absl::Duration user;
  absl::Duration system;
  int64_t voluntary_switches = 0;    // the thread waited (a wake-up each)
  int64_t involuntary_switches = 0;  // the scheduler took its CPU
};

// By thread name (trailing digits, '-' and '_' dropped).
using ThreadCpu = std::map<std::string, ThreadGroupCpu>;

// REQUIRES: `pid` is running.
absl::StatusOr<ThreadCpu> ReadThreadCpu(pid_t pid);

// `after` minus `before`, per name (a name only in `after` counts from 0).
ThreadCpu ThreadCpuDelta(const ThreadCpu& before, const ThreadCpu& after);

// The sum over every name.
ThreadGroupCpu TotalCpu(const ThreadCpu& cpu);

// "tailgate-loop-1" -> "tailgate-loop". Exposed for tests.
std::string ThreadGroupName(const std::string& comm);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_MEASURE_THREAD_CPU_H_
