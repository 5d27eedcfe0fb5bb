#include "experiment/load/grpc_batches.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "experiment/load/steady_reads.h"
#include "hedge/sync/mutex.h"

namespace tailgate::experiment {
namespace {

v1::ReadRequest ReadFor(const std::string& path, bool disable_hedging) {
  v1::ReadRequest read;
  read.set_path(path);
  if (disable_hedging) read.mutable_hedge()->set_disable(true);
  return read;
}

void CountFailure(BatchResult& result, std::string error) {
  ++result.failed;
  if (result.first_error.empty()) result.first_error = std::move(error);
}

// One answer: "" when good, else what it got.
std::string AnswerError(int code, const std::string& message,
                        const v1::ReadResponse* response) {
  if (code != 0) return absl::StrCat("grpc_", code, " ", message);
  return HttpAnswerError(response->status(), response->body());
}

}  // namespace

BatchResult ReadManyBatches::ReadBatch(const std::vector<std::string>& paths) {
  v1::ReadManyRequest request;
  request.set_max_in_flight(options_.max_in_flight);
  for (const std::string& path : paths) {
    *request.add_reads() = ReadFor(path, options_.disable_hedging);
  }
  BatchResult result;
  std::vector<bool> seen(paths.size());
  grpc::ClientContext context;
  const absl::Time start = absl::Now();
  context.set_deadline(absl::ToChronoTime(start + options_.deadline));
  std::unique_ptr<grpc::ClientReader<v1::ReadManyItem>> reader =
      stub_->ReadMany(&context, request);
  v1::ReadManyItem item;
  while (reader->Read(&item)) {
    result.key_latencies.push_back(absl::Now() - start);
    if (item.index() >= paths.size() || seen[item.index()]) {
      CountFailure(result, absl::StrCat("item index ", item.index(),
                                        " out of range or repeated"));
      continue;
    }
    seen[item.index()] = true;
    result.attempts += item.response().trace().attempts();
    std::string error =
        AnswerError(item.code(), item.message(),
                    item.has_response() ? &item.response() : nullptr);
    if (!error.empty()) CountFailure(result, std::move(error));
  }
  const grpc::Status status = reader->Finish();
  result.latency = absl::Now() - start;
  const int64_t missing = std::count(seen.begin(), seen.end(), false);
  if (!status.ok()) {
    CountFailure(result,
                 absl::StrCat("ReadMany ended with ", status.error_code(), " ",
                              status.error_message()));
    result.failed += missing - 1;
  } else if (missing > 0) {
    CountFailure(result, absl::StrCat(missing, " keys without an item"));
    result.failed += missing - 1;
  }
  return result;
}

namespace {

// The shared state of one ReadCallBatches batch; held by the waiting
// thread and by every call's callback, so that the last callback may
// still touch it after the waiter has returned.
struct CallBatch {
  CallBatch(const std::vector<std::string>& p, v1::HedgedRead::Stub& s,
            const GrpcBatchOptions& o)
      : paths(p), stub(s), options(o) {}

  const std::vector<std::string>& paths;  // valid until `ended` is full
  v1::HedgedRead::Stub& stub;
  const GrpcBatchOptions options;
  absl::Time start;
  hedge::Mutex mu;
  hedge::CondVar ended_all;
  size_t next ABSL_GUARDED_BY(mu) = 0;  // the next path to start
  size_t ended ABSL_GUARDED_BY(mu) = 0;
  BatchResult result ABSL_GUARDED_BY(mu);
};

struct OneCall {
  grpc::ClientContext context;
  v1::ReadRequest request;
  v1::ReadResponse response;
};

void StartCall(std::shared_ptr<CallBatch> batch, size_t index) {
  auto* call = new OneCall;
  call->request = ReadFor(batch->paths[index], batch->options.disable_hedging);
  call->context.set_deadline(
      absl::ToChronoTime(batch->start + batch->options.deadline));
  batch->stub.async()->Read(
      &call->context, &call->request, &call->response,
      [batch, call](grpc::Status status) {
        std::string error = AnswerError(
            status.error_code(), status.error_message(), &call->response);
        const int64_t attempts = call->response.trace().attempts();
        delete call;
        std::optional<size_t> next;
        {
          hedge::MutexLock lock(&batch->mu);
          batch->result.key_latencies.push_back(absl::Now() - batch->start);
          batch->result.attempts += attempts;
          if (!error.empty()) CountFailure(batch->result, std::move(error));
          if (batch->next < batch->paths.size()) next = batch->next++;
          if (++batch->ended == batch->paths.size()) {
            batch->result.latency = absl::Now() - batch->start;
            batch->ended_all.SignalAll();
          }
        }
        if (next.has_value()) StartCall(batch, *next);
      });
}

}  // namespace

BatchResult ReadCallBatches::ReadBatch(const std::vector<std::string>& paths) {
  auto batch = std::make_shared<CallBatch>(paths, *stub_, options_);
  if (paths.empty()) return {};
  batch->start = absl::Now();
  size_t first = 0;
  {
    hedge::MutexLock lock(&batch->mu);
    first = std::min(paths.size(), static_cast<size_t>(options_.max_in_flight));
    batch->next = first;
  }
  for (size_t i = 0; i < first; ++i) StartCall(batch, i);
  hedge::MutexLock lock(&batch->mu);
  while (batch->ended < paths.size()) batch->ended_all.Wait(&batch->mu);
  return std::move(batch->result);
}

}  // namespace tailgate::experiment
