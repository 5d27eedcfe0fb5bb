#include "client/testing/fake_sidecar.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"

namespace tailgate::testing {
namespace {

void SetDuration(absl::Duration duration, google::protobuf::Duration* proto) {
  const int64_t seconds =
      absl::IDivDuration(duration, absl::Seconds(1), &duration);
  proto->set_seconds(seconds);
  proto->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(duration)));
}

// The gRPC code named `name` ("NOT_FOUND"), UNKNOWN for a name it is not.
grpc::StatusCode CodeNamed(absl::string_view name) {
  for (int code = 0; code <= grpc::StatusCode::UNAUTHENTICATED; ++code) {
    if (absl::StatusCodeToString(static_cast<absl::StatusCode>(code)) == name) {
      return static_cast<grpc::StatusCode>(code);
    }
  }
  return grpc::StatusCode::UNKNOWN;
}

// Finishes only when the call is cancelled (by the client, its deadline or
// the server's shutdown).
class HangingReactor final : public grpc::ServerUnaryReactor {
 public:
  void OnCancel() override { Finish(grpc::Status::CANCELLED); }
  void OnDone() override { delete this; }
};

void Answer(int status, absl::string_view body, v1::ReadResponse& response) {
  response.set_status(status);
  response.set_body(std::string(body));
  if (status >= 200 && status < 300) {
    v1::Header* type = response.add_headers();
    type->set_name("content-type");
    type->set_value("text/plain");
    v1::Header* fake = response.add_headers();
    fake->set_name("x-fake");
    fake->set_value("yes");
  }
  v1::ReadTrace& trace = *response.mutable_trace();
  trace.set_attempts(1);
  trace.set_replica(kPrimaryReplica);
  SetDuration(absl::Milliseconds(3), trace.mutable_latency());
}

// The scripted answer to `request`: an error, or OK with `response` set.
grpc::Status Script(const v1::ReadRequest& request,
                    v1::ReadResponse& response) {
  absl::string_view path = request.path();
  int http_status = 0;
  if (absl::ConsumePrefix(&path, "/status/") &&
      absl::SimpleAtoi(path, &http_status)) {
    Answer(http_status, absl::StrCat("status ", http_status, "\n"), response);
  } else if (absl::ConsumePrefix(&path, "/grpc/")) {
    return grpc::Status(CodeNamed(path), absl::StrCat("fake ", path));
  } else if (request.path() == "/binary") {
    std::string body;
    for (int byte = 0; byte < 256; ++byte)
      body.push_back(static_cast<char>(byte));
    Answer(200, body, response);
  } else if (request.path() == "/hedged") {
    Answer(200, "hedged\n", response);
    *response.mutable_trace() = HedgedTrace();
  } else {
    const bool head = request.method() == v1::METHOD_HEAD;
    Answer(200, head ? "" : absl::StrCat("hello from ", request.path(), "\n"),
           response);
  }
  return grpc::Status::OK;
}

// Streams a ReadMany's items: every read's scripted answer, last read
// first; then OK, or (a batch holding /hang) nothing until the call ends.
class ReadManyReactor final
    : public grpc::ServerWriteReactor<v1::ReadManyItem> {
 public:
  explicit ReadManyReactor(const v1::ReadManyRequest& request) {
    if (request.reads_size() > kMaxBatchReads) {
      Finish(grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat("a batch holds at most --max_batch_reads=",
                       kMaxBatchReads, " reads, got ", request.reads_size())));
      return;
    }
    for (int i = request.reads_size() - 1; i >= 0; --i) {
      const v1::ReadRequest& read = request.reads(i);
      if (read.path() == "/hang") {
        hang_ = true;
        continue;
      }
      v1::ReadManyItem& item = items_.emplace_back();
      item.set_index(read.path() == "/bad-index" ? request.reads_size() : i);
      const grpc::Status status = Script(read, *item.mutable_response());
      if (!status.ok()) {
        item.clear_response();
        item.set_code(status.error_code());
        item.set_message(status.error_message());
      }
    }
    absl::MutexLock lock(&mu_);
    Next();
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok || cancelled_) {
      FinishOnce(grpc::Status::CANCELLED);
      return;
    }
    Next();
  }

  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    if (!writing_) FinishOnce(grpc::Status::CANCELLED);
  }

  void OnDone() override { delete this; }

 private:
  void Next() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (next_ < items_.size()) {
      writing_ = true;
      StartWrite(&items_[next_++]);
    } else if (!hang_) {
      FinishOnce(grpc::Status::OK);
    }
  }

  void FinishOnce(const grpc::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return;
    finished_ = true;
    Finish(status);
  }

  std::vector<v1::ReadManyItem> items_;  // in sending order
  bool hang_ = false;
  absl::Mutex mu_;
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

v1::ReadTrace HedgedTrace() {
  v1::ReadTrace trace;
  trace.set_attempts(2);
  trace.set_hedged(true);
  trace.set_hedge_won(true);
  trace.set_replica(kHedgeReplica);
  SetDuration(absl::Microseconds(12500), trace.mutable_latency());
  return trace;
}

v1::GetStatsResponse CannedStats() {
  v1::GetStatsResponse stats;
  stats.set_requests(10);
  stats.set_rejected(1);
  stats.set_attempts(12);
  stats.set_hedges(2);
  stats.set_hedge_wins(1);
  stats.set_timeouts(3);
  stats.set_backend_failures(4);
  stats.set_in_flight(5);
  stats.set_amplification(1.2);
  stats.set_hedge_credits(2.5);
  stats.set_cancelled(6);
  stats.set_hedges_skipped(7);
  v1::ReplicaStats* a = stats.add_replicas();
  a->set_url(kPrimaryReplica);
  a->set_circuit(v1::CIRCUIT_STATE_CLOSED);
  a->set_generation(0);
  a->set_attempts(8);
  a->set_failures(1);
  a->set_in_flight(2);
  v1::ReplicaStats* b = stats.add_replicas();
  b->set_url(kHedgeReplica);
  b->set_circuit(v1::CIRCUIT_STATE_HALF_OPEN);
  b->set_generation(2);
  b->set_attempts(4);
  b->set_failures(3);
  b->set_in_flight(0);
  b->set_state(v1::REPLICA_STATE_PROBING);
  b->set_ejections_consecutive(1);
  b->set_ejections_failure_rate(2);
  b->set_ejections_probe(3);
  b->set_give_ups(4);
  b->set_probes_passed(1);
  b->set_probes_failed(3);
  b->set_weight(0.25);
  b->set_cost_seconds(0.5);
  SetDuration(absl::Milliseconds(40), b->mutable_latency());
  b->set_failure_rate(0.75);
  SetDuration(absl::Seconds(4), b->mutable_ejected_for());
  b->set_backed_off(true);
  SetDuration(absl::Seconds(3), b->mutable_back_off_remaining());
  b->set_overload_answers_429(5);
  b->set_overload_answers_503(6);
  v1::UpstreamStats* upstream = stats.add_upstreams();
  upstream->set_name("");
  SetDuration(absl::Milliseconds(60), upstream->mutable_give_up_after());
  upstream->set_give_up_learned(true);
  upstream->set_give_up_fallbacks(6);
  return stats;
}

class FakeSidecar::Services final : public v1::HedgedRead::CallbackService,
                                    public v1::Admin::CallbackService {
 public:
  grpc::ServerUnaryReactor* Read(grpc::CallbackServerContext* context,
                                 const v1::ReadRequest* request,
                                 v1::ReadResponse* response) override {
    {
      absl::MutexLock lock(&mu_);
      last_request_ = *request;
      last_peer_ = context->peer();
    }
    if (request->path() == "/hang") return new HangingReactor();
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(Script(*request, *response));
    return reactor;
  }

  grpc::ServerWriteReactor<v1::ReadManyItem>* ReadMany(
      grpc::CallbackServerContext* context,
      const v1::ReadManyRequest* request) override {
    {
      absl::MutexLock lock(&mu_);
      last_read_many_ = *request;
      last_peer_ = context->peer();
    }
    return new ReadManyReactor(*request);
  }

  grpc::ServerUnaryReactor* GetStats(grpc::CallbackServerContext* context,
                                     const v1::GetStatsRequest*,
                                     v1::GetStatsResponse* response) override {
    *response = CannedStats();
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerUnaryReactor* GetMetrics(
      grpc::CallbackServerContext* context, const v1::GetMetricsRequest*,
      v1::GetMetricsResponse* response) override {
    response->set_content_type(kMetricsContentType);
    response->set_text(kMetricsText);
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  v1::ReadRequest last_request() const {
    absl::MutexLock lock(&mu_);
    return last_request_;
  }

  std::string last_peer() const {
    absl::MutexLock lock(&mu_);
    return last_peer_;
  }

  v1::ReadManyRequest last_read_many() const {
    absl::MutexLock lock(&mu_);
    return last_read_many_;
  }

 private:
  mutable absl::Mutex mu_;
  v1::ReadRequest last_request_ ABSL_GUARDED_BY(mu_);
  std::string last_peer_ ABSL_GUARDED_BY(mu_);
  v1::ReadManyRequest last_read_many_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<FakeSidecar> FakeSidecar::Start(const std::string& address) {
  auto services = std::make_unique<Services>();
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(
      static_cast<v1::HedgedRead::CallbackService*>(services.get()));
  builder.RegisterService(
      static_cast<v1::Admin::CallbackService*>(services.get()));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return nullptr;
  std::string target = address;
  if (!absl::StartsWith(address, "unix:")) {
    target = absl::StrCat(address.substr(0, address.rfind(':')), ":", port);
  }
  return std::unique_ptr<FakeSidecar>(new FakeSidecar(
      std::move(services), std::move(server), std::move(target)));
}

FakeSidecar::FakeSidecar(std::unique_ptr<Services> services,
                         std::unique_ptr<grpc::Server> server,
                         std::string target)
    : services_(std::move(services)),
      server_(std::move(server)),
      target_(std::move(target)) {}

FakeSidecar::~FakeSidecar() {
  // Cancels the calls still in flight at once (the hanging ones).
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
}

v1::ReadRequest FakeSidecar::last_request() const {
  return services_->last_request();
}

std::string FakeSidecar::last_peer() const { return services_->last_peer(); }

v1::ReadManyRequest FakeSidecar::last_read_many() const {
  return services_->last_read_many();
}

}  // namespace tailgate::testing
