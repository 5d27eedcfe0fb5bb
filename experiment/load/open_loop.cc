#include "experiment/load/open_loop.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "experiment/config/workload.h"
#include "experiment/load/read_outcome.h"

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

// Takes the samples out of `from`, in ascending order.
std::vector<absl::Duration> SortedMove(std::vector<absl::Duration>& from) {
  std::vector<absl::Duration> sorted = std::move(from);
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

// One open-loop run: the scheduler on the calling thread, the answers on
// gRPC threads.
class OpenLoopRun {
 public:
  OpenLoopRun(Client& client, const OpenLoopOptions& options)
      : client_(client),
        options_(options),
        late_after_(absl::ToChronoNanoseconds(options.late_after)),
        scheduled_(static_cast<int64_t>(std::floor(
            options.rate * absl::ToDoubleSeconds(options.duration)))) {
    latencies_.reserve(scheduled_);
    send_latencies_.reserve(scheduled_);
  }

  OpenLoopResult Run(Progress& progress) {
    start_ = SteadyClock::now();
    for (int64_t i = 0; i < scheduled_; ++i) {
      const SteadyClock::time_point when = ScheduledTime(i);
      // Behind schedule, send at once: no sleep, no system call.
      if (SteadyClock::now() < when) SleepUntil(when);
      if (!Admit()) {
        ++dropped_;
        continue;
      }
      Send(i, when);
      progress.Update(i + 1);
    }
    send_elapsed_ = SteadyClock::now() - start_;
    absl::MutexLock lock(&mu_);
    // Every read has a deadline, so gRPC answers each of them; the
    // callbacks refer to this object, which must outlive them all.
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return outstanding_ == 0;
    };
    mu_.Await(absl::Condition(&idle));
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
    const SteadyClock::time_point sent_at = SteadyClock::now();
    const SteadyClock::duration lag = sent_at - when;
    if (lag > late_after_) ++late_;
    max_lag_ = std::max(max_lag_, lag);
    ReadRequest request;
    request.path = options_.path(i);
    request.tenant = options_.tenant;
    request.deadline = options_.deadline;
    client_.ReadAsync(
        request, [this, i, when, sent_at](absl::StatusOr<ReadResponse> result) {
          OnAnswer(i, when, sent_at, result);
        });
  }

  // On a gRPC thread.
  void OnAnswer(int64_t i, SteadyClock::time_point when,
                SteadyClock::time_point sent_at,
                const absl::StatusOr<ReadResponse>& result) {
    const auto now = SteadyClock::now();
    const ReadOutcome outcome = Classify(result);
    absl::MutexLock lock(&mu_);
    switch (outcome) {
      case ReadOutcome::kOk:
        latencies_.push_back(absl::FromChrono(now - when));
        send_latencies_.push_back(absl::FromChrono(now - sent_at));
        break;
      case ReadOutcome::kRejected:
        rejection_latencies_.push_back(absl::FromChrono(now - sent_at));
        failure_times_.push_back(absl::FromChrono(now - start_));
        break;
      case ReadOutcome::kFailed:
        ++failed_;
        failure_times_.push_back(absl::FromChrono(now - start_));
        if (failure_notes_.size() < kFailureNotes) {
          failure_notes_.push_back(DescribeFailure(options_.path(i), result));
        }
        break;
      case ReadOutcome::kWrongAnswer:
        if (wrong_answers_++ == 0) {
          first_wrong_answer_ = DescribeFailure(options_.path(i), result);
        }
        break;
    }
    last_answer_ = std::max(last_answer_, now);
    --outstanding_;
  }

  OpenLoopResult Result() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    OpenLoopResult result;
    result.scheduled = scheduled_;
    result.sent = sent_;
    result.dropped = dropped_;
    result.late = late_;
    result.max_lag = absl::FromChrono(max_lag_);
    result.ok = static_cast<int64_t>(latencies_.size());
    result.rejected = static_cast<int64_t>(rejection_latencies_.size());
    result.failed = failed_;
    result.wrong_answers = wrong_answers_;
    result.elapsed = absl::FromChrono(std::max(last_answer_, start_) - start_);
    result.send_elapsed = absl::FromChrono(send_elapsed_);
    result.latencies = SortedMove(latencies_);
    result.send_latencies = SortedMove(send_latencies_);
    result.rejection_latencies = SortedMove(rejection_latencies_);
    result.failure_times = SortedMove(failure_times_);
    result.failure_notes = std::move(failure_notes_);
    result.first_wrong_answer = std::move(first_wrong_answer_);
    return result;
  }

  // Constant after construction.
  Client& client_;
  const OpenLoopOptions options_;
  const SteadyClock::duration late_after_;
  const int64_t scheduled_;

  // Set by the scheduler before the first send, then read-only (the
  // answers' threads read it).
  SteadyClock::time_point start_;

  // Scheduler thread only.
  int64_t sent_ = 0;
  int64_t dropped_ = 0;
  int64_t late_ = 0;
  SteadyClock::duration max_lag_ = SteadyClock::duration::zero();
  SteadyClock::duration send_elapsed_ = SteadyClock::duration::zero();

  absl::Mutex mu_;
  int64_t outstanding_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<absl::Duration> latencies_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Duration> send_latencies_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Duration> rejection_latencies_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Duration> failure_times_ ABSL_GUARDED_BY(mu_);
  int64_t failed_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> failure_notes_ ABSL_GUARDED_BY(mu_);
  int64_t wrong_answers_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<std::string> first_wrong_answer_ ABSL_GUARDED_BY(mu_);
  SteadyClock::time_point last_answer_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

OpenLoopResult RunOpenLoop(Client& client, const OpenLoopOptions& options,
                           Progress& progress) {
  OpenLoopRun run(client, options);
  return run.Run(progress);
}

absl::Status WrongAnswerError(const OpenLoopResult& result) {
  if (result.wrong_answers == 0) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(result.wrong_answers,
                   " wrong answers; the first: ", *result.first_wrong_answer));
}

}  // namespace tailgate::experiment
