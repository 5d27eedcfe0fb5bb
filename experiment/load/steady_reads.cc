#include "experiment/load/steady_reads.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "experiment/config/workload.h"
#include "hedge/sync/mutex.h"

namespace tailgate::experiment {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The records of one run; filled in by the reads' callbacks.
class RecordBook {
 public:
  explicit RecordBook(int64_t reads) : records_(reads), outstanding_(reads) {}

  // From any thread, once per read.
  void Record(int64_t i, ReadRecord record) {
    hedge::MutexLock lock(&mu_);
    records_[i] = std::move(record);
    if (--outstanding_ == 0) all_recorded_.SignalAll();
  }

  // Once every read has been recorded.
  std::vector<ReadRecord> Await() {
    hedge::MutexLock lock(&mu_);
    while (outstanding_ > 0) all_recorded_.Wait(&mu_);
    return std::move(records_);
  }

 private:
  // hedge::Mutex rather than absl::Mutex: ThreadSanitizer sees it.
  hedge::Mutex mu_;
  hedge::CondVar all_recorded_;
  std::vector<ReadRecord> records_ ABSL_GUARDED_BY(mu_);
  int64_t outstanding_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::string HttpAnswerError(int status, absl::string_view body) {
  if (status != 200) return absl::StrCat("http_", status);
  return body == kReplicaBody ? "" : kWrongBody;
}

std::vector<ReadRecord> RunSteadyReads(ReadTarget& target,
                                       const SteadyReadOptions& options,
                                       Progress& progress) {
  const auto reads = static_cast<int64_t>(
      std::floor(options.rate * absl::ToDoubleSeconds(options.duration)));
  RecordBook book(reads);
  const SteadyClock::time_point start = SteadyClock::now();
  for (int64_t i = 0; i < reads; ++i) {
    const absl::Duration scheduled = absl::Nanoseconds(
        std::llround(static_cast<double>(i) * 1e9 / options.rate));
    const SteadyClock::time_point when =
        start + absl::ToChronoNanoseconds(scheduled);
    std::this_thread::sleep_until(when);
    target.StartRead(
        ReadPath(i), options.deadline,
        [&book, i, scheduled, when](std::string error) {
          book.Record(i,
                      {scheduled, absl::FromChrono(SteadyClock::now() - when),
                       std::move(error)});
        });
    progress.Update(i + 1);
  }
  return book.Await();
}

}  // namespace tailgate::experiment
