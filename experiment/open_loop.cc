#include "experiment/open_loop.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "experiment/read_outcome.h"
#include "experiment/workload.h"

namespace tailgate::experiment {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Sleeps until `when` on CLOCK_MONOTONIC (steady_clock's clock on Linux),
// with an absolute deadline, so that no drift accumulates.
void SleepUntil(SteadyClock::time_point when) {
  const auto since_epoch = when.time_since_epoch();
  timespec deadline;
  deadline.tv_sec =
      std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
  deadline.tv_nsec = (since_epoch - std::chrono::seconds(deadline.tv_sec)) /
                     std::chrono::nanoseconds(1);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) ==
         EINTR) {
  }
}

// One open-loop run: the scheduler on the calling thread, the answers on
// gRPC threads.
class OpenLoopRun {
 public:
  OpenLoopRun(Client& client, const OpenLoopOptions& options)
      : client_(client),
        options_(options),
        scheduled_(static_cast<int64_t>(std::floor(
            options.rate * absl::ToDoubleSeconds(options.duration)))),
        latencies_(scheduled_) {}

  absl::StatusOr<OpenLoopResult> Run(Progress& progress) {
    start_ = SteadyClock::now();
    for (int64_t i = 0; i < scheduled_; ++i) {
      const SteadyClock::time_point when = ScheduledTime(i);
      SleepUntil(when);
      if (!Admit()) {
        ++dropped_;
        continue;
      }
      Send(i, when);
      progress.Update(i + 1);
    }
    absl::MutexLock lock(&mu_);
    // Every read has a deadline, so gRPC answers each of them; the
    // callbacks refer to this object, which must outlive them all.
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return outstanding_ == 0;
    };
    mu_.Await(absl::Condition(&idle));
    if (wrong_answer_.has_value()) return absl::InternalError(*wrong_answer_);
    return Result();
  }

 private:
  SteadyClock::time_point ScheduledTime(int64_t i) const {
    const double seconds = static_cast<double>(i) / options_.rate;
    return start_ + std::chrono::nanoseconds(std::llround(seconds * 1e9));
  }

  bool Admit() {
    absl::MutexLock lock(&mu_);
    if (outstanding_ >= options_.max_outstanding) return false;
    ++outstanding_;
    return true;
  }

  void Send(int64_t i, SteadyClock::time_point when) {
    ++sent_;
    ReadRequest request;
    request.path = ReadPath(i);
    request.deadline = options_.deadline;
    client_.ReadAsync(request,
                      [this, i, when](absl::StatusOr<ReadResponse> result) {
                        OnAnswer(i, when, result);
                      });
  }

  // On a gRPC thread.
  void OnAnswer(int64_t i, SteadyClock::time_point when,
                const absl::StatusOr<ReadResponse>& result) {
    const auto now = SteadyClock::now();
    const ReadOutcome outcome = Classify(result);
    // Each read owns its slot; mu_ orders this write before the
    // scheduler's reading of it in Result().
    if (outcome == ReadOutcome::kOk) {
      latencies_[i] = absl::FromChrono(now - when);
    }
    absl::MutexLock lock(&mu_);
    switch (outcome) {
      case ReadOutcome::kOk:
        ++ok_;
        break;
      case ReadOutcome::kRejected:
        ++rejected_;
        break;
      case ReadOutcome::kFailed:
        ++failed_;
        break;
      case ReadOutcome::kWrongAnswer:
        if (!wrong_answer_.has_value()) {
          wrong_answer_ = DescribeFailure(ReadPath(i), result);
        }
        break;
    }
    last_answer_ = std::max(last_answer_, now);
    --outstanding_;
  }

  OpenLoopResult Result() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    OpenLoopResult result;
    result.scheduled = scheduled_;
    result.sent = sent_;
    result.dropped = dropped_;
    result.ok = ok_;
    result.rejected = rejected_;
    result.failed = failed_;
    result.elapsed = absl::FromChrono(std::max(last_answer_, start_) - start_);
    result.latencies.reserve(ok_);
    for (const std::optional<absl::Duration>& latency : latencies_) {
      if (latency.has_value()) result.latencies.push_back(*latency);
    }
    std::sort(result.latencies.begin(), result.latencies.end());
    return result;
  }

  // Constant after construction.
  Client& client_;
  const OpenLoopOptions options_;
  const int64_t scheduled_;

  // Scheduler thread only.
  SteadyClock::time_point start_;
  int64_t sent_ = 0;
  int64_t dropped_ = 0;

  // Slot i written once, by read i's answer.
  std::vector<std::optional<absl::Duration>> latencies_;

  mutable absl::Mutex mu_;
  int64_t outstanding_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t ok_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t rejected_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t failed_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<std::string> wrong_answer_ ABSL_GUARDED_BY(mu_);
  SteadyClock::time_point last_answer_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<OpenLoopResult> RunOpenLoop(Client& client,
                                           const OpenLoopOptions& options,
                                           Progress& progress) {
  OpenLoopRun run(client, options);
  return run.Run(progress);
}

}  // namespace tailgate::experiment
