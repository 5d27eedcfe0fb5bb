#include "experiment/load/http_batches.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "hedge/sync/mutex.h"

namespace tailgate::experiment {
namespace {

// Held by the waiting thread and by every read's `done`, so that the last
// one may still touch it after the waiter has returned.
struct HttpBatch {
  HttpBatch(const std::vector<std::string>& p, HttpReadTarget& t,
            absl::Duration d)
      : paths(p), target(t), deadline(d) {}

  const std::vector<std::string>& paths;  // valid until `ended` is full
  HttpReadTarget& target;
  const absl::Duration deadline;
  absl::Time start;
  hedge::Mutex mu;
  hedge::CondVar ended_all;
  size_t next ABSL_GUARDED_BY(mu) = 0;
  size_t ended ABSL_GUARDED_BY(mu) = 0;
  BatchResult result ABSL_GUARDED_BY(mu);
};

void StartGet(std::shared_ptr<HttpBatch> batch, size_t index) {
  batch->target.StartRead(
      batch->paths[index], batch->deadline, [batch](std::string error) {
        std::optional<size_t> next;
        {
          hedge::MutexLock lock(&batch->mu);
          batch->result.key_latencies.push_back(absl::Now() - batch->start);
          if (!error.empty()) {
            ++batch->result.failed;
            if (batch->result.first_error.empty()) {
              batch->result.first_error = std::move(error);
            }
          }
          if (batch->next < batch->paths.size()) next = batch->next++;
          if (++batch->ended == batch->paths.size()) {
            batch->result.latency = absl::Now() - batch->start;
            batch->ended_all.SignalAll();
          }
        }
        if (next.has_value()) StartGet(batch, *next);
      });
}

}  // namespace

BatchResult HttpBatches::ReadBatch(const std::vector<std::string>& paths) {
  if (paths.empty()) return {};
  auto batch = std::make_shared<HttpBatch>(paths, target_, deadline_);
  batch->start = absl::Now();
  size_t first = 0;
  {
    hedge::MutexLock lock(&batch->mu);
    first = std::min(paths.size(), static_cast<size_t>(max_in_flight_));
    batch->next = first;
  }
  for (size_t i = 0; i < first; ++i) StartGet(batch, i);
  hedge::MutexLock lock(&batch->mu);
  while (batch->ended < paths.size()) batch->ended_all.Wait(&batch->mu);
  return std::move(batch->result);
}

}  // namespace tailgate::experiment
