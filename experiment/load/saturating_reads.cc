#include "experiment/load/saturating_reads.h"

#include <chrono>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "experiment/config/workload.h"
#include "experiment/load/read_outcome.h"

namespace tailgate::experiment {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr absl::Duration kReadDeadline = absl::Seconds(2);

class SaturatingRun {
 public:
  SaturatingRun(Client& client, int concurrency, absl::Duration duration)
      : client_(client),
        concurrency_(concurrency),
        duration_(duration),
        request_(MakeRequest()) {}

  absl::StatusOr<LoadCount> Run() {
    {
      absl::MutexLock lock(&mu_);
      end_ = SteadyClock::now() + absl::ToChronoNanoseconds(duration_);
      active_ = concurrency_;
    }
    for (int i = 0; i < concurrency_; ++i) Send();
    absl::MutexLock lock(&mu_);
    // Each read has a deadline, so every lane ends; the callbacks refer
    // to this object, which must outlive them all.
    mu_.Await(absl::Condition(this, &SaturatingRun::Idle));
    if (wrong_answer_.has_value()) return absl::InternalError(*wrong_answer_);
    count_.window = duration_;
    return count_;
  }

 private:
  static ReadRequest MakeRequest() {
    ReadRequest request;
    request.path = ReadPath(0);
    request.deadline = kReadDeadline;
    return request;
  }

  void Send() {
    client_.ReadAsync(request_, [this](absl::StatusOr<ReadResponse> result) {
      OnAnswer(result);
    });
  }

  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return active_ == 0; }

  // On a gRPC thread: counts the answer, then keeps the lane busy until
  // the window closes.
  void OnAnswer(const absl::StatusOr<ReadResponse>& result) {
    const ReadOutcome outcome = Classify(result);
    bool again = false;
    {
      absl::MutexLock lock(&mu_);
      const bool in_window = SteadyClock::now() < end_;
      if (in_window) {
        count_.ok += outcome == ReadOutcome::kOk;
        count_.rejected += outcome == ReadOutcome::kRejected;
        count_.failed += outcome == ReadOutcome::kFailed;
      }
      if (outcome == ReadOutcome::kWrongAnswer && !wrong_answer_.has_value()) {
        wrong_answer_ = DescribeFailure(request_.path, result);
      }
      again = in_window && !wrong_answer_.has_value();
      if (!again) --active_;
    }
    if (again) Send();
  }

  // Constant after construction.
  Client& client_;
  const int concurrency_;
  const absl::Duration duration_;
  const ReadRequest request_;

  mutable absl::Mutex mu_;
  SteadyClock::time_point end_ ABSL_GUARDED_BY(mu_);
  int active_ ABSL_GUARDED_BY(mu_) = 0;  // lanes still sending
  LoadCount count_ ABSL_GUARDED_BY(mu_);
  std::optional<std::string> wrong_answer_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<LoadCount> RunSaturatingReads(Client& client, int concurrency,
                                             absl::Duration duration) {
  SaturatingRun run(client, concurrency, duration);
  return run.Run();
}

}  // namespace tailgate::experiment
