// RssSampler: a process's resident set (VmRSS) sampled at a fixed interval
// on a thread of its own, for the overload scenario's memory series.
//
// Example:
//   RssSampler sampler(pid, absl::Milliseconds(250));   // first sample now
//   ... load the process ...
//   absl::StatusOr<RssSeries> series = sampler.Stop();
//
// Thread safety: construct, Stop and destroy from one thread; the sampling
// thread only reads procfs and appends to the series, which Stop hands
// over after joining it.

#ifndef TAILGATE_EXPERIMENT_MEASURE_RSS_SAMPLER_H_
#define TAILGATE_EXPERIMENT_MEASURE_RSS_SAMPLER_H_

#include <sys/types.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace tailgate::experiment {

struct RssSeries {
  absl::Duration interval;
  std::vector<int64_t> kib;  // in order; one per interval from the start

  // REQUIRES: not empty.
  int64_t Min() const;
  int64_t Max() const;
};

class RssSampler {
 public:
  // Starts sampling `pid`: one sample at once, then one per `interval`.
  RssSampler(pid_t pid, absl::Duration interval);
  // Stops sampling if Stop was not called.
  ~RssSampler();
  RssSampler(const RssSampler&) = delete;
  RssSampler& operator=(const RssSampler&) = delete;

  // Ends sampling. The series (never empty), or why a sample failed (the
  // process went away). REQUIRES: called once.
  absl::StatusOr<RssSeries> Stop();

 private:
  void Sample();

  // Constant after construction.
  const pid_t pid_;

  // The sampling thread's until Stop joins it.
  RssSeries series_;
  absl::Status error_;

  absl::Notification stop_;
  std::thread sampler_;
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_MEASURE_RSS_SAMPLER_H_
