// PeriodicSampler: reads something (a sidecar's counters, say) at a fixed
// interval on a thread of its own while the caller runs a measurement, and
// hands the timed samples over when stopped.
//
// Example:
//   PeriodicSampler<Counters> sampler([&] { return ReadCounters(); },
//                                     absl::Seconds(1));
//   ... run the reads ...
//   absl::StatusOr<std::vector<TimedSample<Counters>>> samples =
//       sampler.Stop();
//
// Thread safety: construct, Stop and destroy a sampler from one thread;
// `read` runs on that thread (the first and the last sample) and on the
// sampler's own thread (the others), never on both at once. The samples
// belong to the sampling thread until Stop joins it.

#ifndef TAILGATE_EXPERIMENT_REPORT_PERIODIC_SAMPLER_H_
#define TAILGATE_EXPERIMENT_REPORT_PERIODIC_SAMPLER_H_

#include <cstdint>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tailgate::experiment {

template <typename T>
struct TimedSample {
  absl::Duration at;  // from the sampler's construction
  T value;
};

template <typename T>
class PeriodicSampler {
 public:
  using Read = std::function<absl::StatusOr<T>()>;

  // Samples once on the calling thread, then on a thread of its own at
  // every multiple of `interval` from now (a late sample does not shift
  // the later ones). Sampling ends at the first error of `read`.
  PeriodicSampler(Read read, absl::Duration interval)
      : read_(std::move(read)), start_(absl::Now()) {
    Sample();  // before the constructor returns: nothing done since is missed
    sampler_ = std::thread([this, interval] {
      for (int64_t k = 1; error_.ok(); ++k) {
        if (stop_.WaitForNotificationWithDeadline(start_ + k * interval)) {
          return;
        }
        Sample();
      }
    });
  }

  // Stops sampling if Stop was not called.
  ~PeriodicSampler() {
    if (sampler_.joinable()) Stop().IgnoreError();
  }
  PeriodicSampler(const PeriodicSampler&) = delete;
  PeriodicSampler& operator=(const PeriodicSampler&) = delete;

  // Ends sampling with one last sample, taken on the calling thread. The
  // samples (at least two, ascending), or the first error of `read`.
  // REQUIRES: called once.
  absl::StatusOr<std::vector<TimedSample<T>>> Stop() {
    stop_.Notify();
    sampler_.join();
    if (error_.ok()) Sample();
    if (!error_.ok()) return error_;
    return std::move(samples_);
  }

 private:
  void Sample() {
    absl::StatusOr<T> value = read_();
    if (!value.ok()) {
      error_ = value.status();
      return;
    }
    samples_.push_back({absl::Now() - start_, *std::move(value)});
  }

  // Constant after construction.
  const Read read_;
  const absl::Time start_;

  // The sampling thread's until Stop joins it.
  std::vector<TimedSample<T>> samples_;
  absl::Status error_;

  absl::Notification stop_;
  std::thread sampler_;
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_REPORT_PERIODIC_SAMPLER_H_
