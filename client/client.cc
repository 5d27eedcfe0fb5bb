#include "client/client.h"

#include <grpcpp/grpcpp.h>

#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "client/sidecar_channel.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"

namespace tailgate {
namespace {

using client_internal::FromGrpcStatus;
using client_internal::FromProtoDuration;

absl::StatusOr<google::protobuf::Duration> ToProtoDuration(
    absl::Duration duration, absl::string_view field) {
  if (duration == absl::InfiniteDuration() ||
      duration == -absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be finite"));
  }
  google::protobuf::Duration proto;
  const int64_t seconds =
      absl::IDivDuration(duration, absl::Seconds(1), &duration);
  proto.set_seconds(seconds);
  proto.set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(duration)));
  return proto;
}

absl::StatusOr<v1::ReadRequest> ToProto(const ReadRequest& request) {
  v1::ReadRequest proto;
  proto.set_path(request.path);
  proto.set_method(request.method == Method::kHead ? v1::METHOD_HEAD
                                                   : v1::METHOD_GET);
  for (const Header& header : request.headers) {
    v1::Header* added = proto.add_headers();
    added->set_name(header.name);
    added->set_value(header.value);
  }
  proto.set_upstream(request.upstream);
  proto.set_tenant(request.tenant);
  if (request.disable_hedge) proto.mutable_hedge()->set_disable(true);
  if (request.hedge_delay != absl::ZeroDuration()) {
    absl::StatusOr<google::protobuf::Duration> delay =
        ToProtoDuration(request.hedge_delay, "hedge_delay");
    if (!delay.ok()) return delay.status();
    *proto.mutable_hedge()->mutable_delay() = *delay;
  }
  return proto;
}

ReadResponse FromProto(v1::ReadResponse& proto) {
  ReadResponse response;
  response.status = proto.status();
  response.headers.reserve(proto.headers_size());
  for (v1::Header& header : *proto.mutable_headers()) {
    response.headers.push_back({std::move(*header.mutable_name()),
                                std::move(*header.mutable_value())});
  }
  response.body = std::move(*proto.mutable_body());
  const v1::ReadTrace& trace = proto.trace();
  response.trace.attempts = trace.attempts();
  response.trace.hedged = trace.hedged();
  response.trace.hedge_won = trace.hedge_won();
  response.trace.replica = trace.replica();
  response.trace.latency = FromProtoDuration(trace.latency());
  return response;
}

absl::StatusOr<v1::ReadManyRequest> ToProto(const ReadManyRequest& request) {
  v1::ReadManyRequest proto;
  proto.mutable_reads()->Reserve(static_cast<int>(request.reads.size()));
  for (size_t i = 0; i < request.reads.size(); ++i) {
    absl::StatusOr<v1::ReadRequest> read = ToProto(request.reads[i]);
    if (!read.ok()) {
      return absl::Status(
          read.status().code(),
          absl::StrCat("reads[", i, "]: ", read.status().message()));
    }
    *proto.add_reads() = *std::move(read);
  }
  proto.set_max_in_flight(request.max_in_flight);
  return proto;
}

// One ReadAsync call in flight: what gRPC needs to outlive the call.
struct PendingRead {
  grpc::ClientContext context;
  v1::ReadRequest request;
  v1::ReadResponse response;
  Client::ReadCallback done;
};

class GrpcClient final : public Client {
 public:
  GrpcClient(std::shared_ptr<grpc::Channel> channel,
             const ClientOptions& options)
      : channel_(std::move(channel)),
        stub_(v1::HedgedRead::NewStub(channel_)),
        default_deadline_(options.default_deadline) {}

  ~GrpcClient() override {
    // The callback of a cancelled call may run inline in TryCancel, and it
    // takes mu_: cancel without holding it, keeping the calls alive.
    std::vector<std::shared_ptr<PendingRead>> in_flight;
    {
      absl::MutexLock lock(&mu_);
      for (const auto& [unused, read] : pending_) in_flight.push_back(read);
    }
    for (const auto& read : in_flight) read->context.TryCancel();
    in_flight.clear();
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](int* unfinished) { return *unfinished == 0; }, &unfinished_));
  }

  // The synchronous stub: the calling thread drives the call itself, so the
  // answer wakes it directly instead of passing through a gRPC callback
  // thread (one thread hand-off less per read).
  absl::StatusOr<ReadResponse> Read(const ReadRequest& request) override {
    absl::StatusOr<v1::ReadRequest> proto = ToProto(request);
    if (!proto.ok()) return proto.status();
    grpc::ClientContext context;
    client_internal::SetTimeout(
        context, request.deadline == absl::ZeroDuration() ? default_deadline_
                                                          : request.deadline);
    v1::ReadResponse response;
    const grpc::Status status = stub_->Read(&context, *proto, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return FromProto(response);
  }

  absl::Status ReadMany(const ReadManyRequest& request,
                        ReadManyCallback on_item) override {
    absl::StatusOr<v1::ReadManyRequest> proto = ToProto(request);
    if (!proto.ok()) return proto.status();
    grpc::ClientContext context;
    client_internal::SetTimeout(
        context, request.deadline == absl::ZeroDuration() ? default_deadline_
                                                          : request.deadline);
    Cancellation* const cancellation = request.cancellation;
    if (cancellation != nullptr &&
        !cancellation->Attach([&context] { context.TryCancel(); })) {
      return absl::CancelledError("cancelled before the call started");
    }
    std::unique_ptr<grpc::ClientReader<v1::ReadManyItem>> reader =
        stub_->ReadMany(&context, *proto);
    absl::Status bad_item;
    v1::ReadManyItem item;
    while (reader->Read(&item)) {
      if (item.index() >= request.reads.size()) {
        bad_item = absl::InternalError(
            absl::StrCat("the sidecar sent an item for read ", item.index(),
                         " of a batch of ", request.reads.size()));
        context.TryCancel();
        break;
      }
      ReadManyItem out;
      out.index = item.index();
      if (item.code() != 0) {
        out.response = absl::Status(static_cast<absl::StatusCode>(item.code()),
                                    item.message());
      } else {
        out.response = FromProto(*item.mutable_response());
      }
      on_item(std::move(out));
    }
    const grpc::Status status = reader->Finish();
    if (cancellation != nullptr) cancellation->Detach();
    if (!bad_item.ok()) return bad_item;
    return FromGrpcStatus(status);
  }

  void ReadAsync(const ReadRequest& request, ReadCallback done) override {
    absl::StatusOr<v1::ReadRequest> proto = ToProto(request);
    if (!proto.ok()) {
      std::move(done)(proto.status());
      return;
    }
    auto read = std::make_shared<PendingRead>();
    read->request = *std::move(proto);
    read->done = std::move(done);
    client_internal::SetTimeout(read->context,
                                request.deadline == absl::ZeroDuration()
                                    ? default_deadline_
                                    : request.deadline);
    PendingRead* const raw = read.get();
    {
      absl::MutexLock lock(&mu_);
      pending_.emplace(raw, std::move(read));
      ++unfinished_;
    }
    stub_->async()->Read(
        &raw->context, &raw->request, &raw->response,
        [this, raw](grpc::Status status) { Complete(*raw, status); });
  }

 private:
  using Pending =
      absl::flat_hash_map<PendingRead*, std::shared_ptr<PendingRead>>;

  void Complete(PendingRead& read, const grpc::Status& status) {
    if (status.ok()) {
      std::move(read.done)(FromProto(read.response));
    } else {
      std::move(read.done)(FromGrpcStatus(status));
    }
    std::shared_ptr<PendingRead> owned;
    {
      absl::MutexLock lock(&mu_);
      auto it = pending_.find(&read);
      owned = std::move(it->second);
      pending_.erase(it);
    }
    // A ClientContext holds a reference to the channel. Free it before
    // letting the destructor go on, so that the channel's last reference is
    // always dropped by the destructor's thread: a grpc::Channel destroyed
    // on a gRPC callback thread can tear down the callback completion queue
    // that thread is polling (gRPC 1.51).
    owned.reset();
    absl::MutexLock lock(&mu_);
    --unfinished_;
  }

  // Constant after construction.
  const std::shared_ptr<grpc::Channel> channel_;
  const std::unique_ptr<v1::HedgedRead::Stub> stub_;
  const absl::Duration default_deadline_;

  absl::Mutex mu_;
  // Every ReadAsync whose callback has not returned yet.
  Pending pending_ ABSL_GUARDED_BY(mu_);
  // ReadAsync calls whose PendingRead is not freed yet.
  int unfinished_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

void Cancellation::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  if (cancel_call_) cancel_call_();
  cancel_call_ = nullptr;
}

bool Cancellation::cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

bool Cancellation::Attach(absl::AnyInvocable<void()> cancel_call) {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return false;
  cancel_call_ = std::move(cancel_call);
  return true;
}

void Cancellation::Detach() {
  absl::MutexLock lock(&mu_);
  cancel_call_ = nullptr;
}

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(
    absl::string_view target, const ClientOptions& options) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      client_internal::OpenSidecarChannel(target, options);
  if (!channel.ok()) return channel.status();
  return std::make_unique<GrpcClient>(*std::move(channel), options);
}

}  // namespace tailgate
