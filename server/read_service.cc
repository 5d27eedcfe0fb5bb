#include "server/read_service.h"

#include <grpc/support/time.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <utility>

#include "server/grpc_status.h"
#include "server/read_admission.h"
#include "server/read_descriptor.h"

namespace tailgate::server {
namespace {

// The call's deadline on the system clock; InfiniteFuture when the caller
// set none. Read from gRPC's own timespec: the std::chrono view
// (ServerContext::deadline) overflows into the past for a grpc-timeout of
// about 2 055 000 hours or more, which would fail the read at once instead
// of leaving it to the engine's --timeout cap.
absl::Time CallDeadline(const grpc::CallbackServerContext& context) {
  const gpr_timespec real =
      gpr_convert_clock_type(context.raw_deadline(), GPR_CLOCK_REALTIME);
  if (gpr_time_cmp(real, gpr_inf_future(GPR_CLOCK_REALTIME)) == 0) {
    return absl::InfiniteFuture();
  }
  return absl::FromUnixSeconds(real.tv_sec) + absl::Nanoseconds(real.tv_nsec);
}

// One admitted Read call. Created by the handler, finished exactly once
// (by the handler when the engine refuses the read, else by the engine's
// callback on its loop thread), deleted in OnDone.
class ReadReactor final : public grpc::ServerUnaryReactor {
 public:
  // REQUIRES: gate.TryEnter() succeeded for this call.
  ReadReactor(ReadAdmission& admission, v1::ReadResponse* response)
      : engine_(admission.engine()),
        gate_(admission.gate()),
        response_(response) {}

  // Called once, by the handler, before it returns the reactor. Until then
  // gRPC runs no reaction (OnCancel, OnDone) and defers a Finish, so the
  // engine may complete the read on its loop thread before Submit returns.
  void Submit(hedge::EngineRead read, ReadAdmission& admission) {
    absl::StatusOr<uint64_t> id = admission.Submit(
        std::move(read), [this](absl::StatusOr<hedge::EngineResponse> result) {
          Complete(std::move(result));
        });
    if (!id.ok()) {
      FinishOnce(ToGrpcStatus(id.status()));
      return;
    }
    read_id_ = *id;
  }

  // The engine answers the cancelled read (CANCELLED) through Complete.
  void OnCancel() override {
    if (read_id_.has_value()) engine_.Cancel(*read_id_);
  }

  void OnDone() override {
    gate_.Exit();
    delete this;
  }

  // gRPC's hook for reactors whose reactions are trivial (server_callback.h
  // marks it internal; gRPC's own DefaultReactor uses it): OnCancel and
  // OnDone then run on the thread that triggers them, often the engine
  // loop inside Finish, instead of after a hand-off to gRPC's executor
  // thread. Ours qualify: OnCancel queues an id for the engine (a mutex
  // and a wake-up), OnDone releases a drain slot and deletes; neither
  // blocks. The hand-off cost a thread switch per read, which on a
  // virtual machine means waking a halted vCPU (docs/BENCHMARKS.md).
  bool InternalInlineable() override { return true; }

 private:
  // Engine loop thread. Nothing may touch `this` after FinishOnce: OnDone
  // may already have deleted it, inline or on another thread.
  void Complete(absl::StatusOr<hedge::EngineResponse> result) {
    if (!result.ok()) {
      FinishOnce(ToGrpcStatus(result.status()));
      return;
    }
    FillReadResponse(*std::move(result), response_);
    FinishOnce(grpc::Status::OK);
  }

  // The engine promises one completion per admitted read and none for a
  // refused one; the guard keeps Finish single even if that were broken.
  void FinishOnce(grpc::Status status) {
    if (finished_.exchange(true, std::memory_order_acq_rel)) return;
    Finish(std::move(status));
  }

  // Constant after construction.
  hedge::Engine& engine_;
  DrainGate& gate_;
  v1::ReadResponse* const response_;

  // Set by the handler before gRPC may call OnCancel.
  std::optional<uint64_t> read_id_;
  std::atomic<bool> finished_{false};
};

grpc::ServerUnaryReactor* Refuse(grpc::CallbackServerContext* context,
                                 grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

}  // namespace

ReadService::ReadService(hedge::Engine& engine, absl::Duration timeout,
                         DrainGate& gate, Rejections& rejections)
    : admission_(engine, timeout, gate, rejections) {}

grpc::ServerUnaryReactor* ReadService::Read(
    grpc::CallbackServerContext* context, const v1::ReadRequest* request,
    v1::ReadResponse* response) {
  absl::StatusOr<hedge::EngineRead> read =
      admission_.Admit(*request, CallDeadline(*context));
  if (!read.ok()) return Refuse(context, ToGrpcStatus(read.status()));
  auto* reactor = new ReadReactor(admission_, response);
  reactor->Submit(*std::move(read), admission_);
  return reactor;
}

}  // namespace tailgate::server
