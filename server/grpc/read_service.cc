#include "server/grpc/read_service.h"

#include <grpc/support/time.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/grpc/grpc_status.h"
#include "server/read/read_admission.h"
#include "server/read/read_descriptor.h"

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

// A cancel this close to the call's deadline is the deadline's doing: the
// client's copy of the deadline and the server's differ by the rounding of
// grpc-timeout and the time the request took to arrive.
constexpr absl::Duration kDeadlineCancelSlack = absl::Milliseconds(10);

// One admitted Read call. Created by the handler, finished exactly once
// (by the handler when the engine refuses the read, else by the engine's
// callback on its loop thread), deleted in OnDone.
class ReadReactor final : public grpc::ServerUnaryReactor, StalledCall {
 public:
  // REQUIRES: calls.admission.Admit() succeeded for this call. `call_deadline`: the call's, on the system clock.
  ReadReactor(ReadService::Calls& calls,
              grpc::CallbackServerContext* context,
              v1::ReadResponse* response, absl::Time call_deadline)
      : calls_(calls),
        context_(context),
        response_(response),
        call_deadline_(call_deadline) {}

  // Called once, by the handler, before it returns the reactor. Until then
  // gRPC runs no reaction (OnCancel, OnDone) and defers a Finish, so the
  // engine may complete the read on its loop thread before Submit returns.
  void Submit(hedge::EngineRead read) {
    absl::StatusOr<uint64_t> id = calls_.admission.Submit(
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
  // A cancel that comes with the call's deadline (the client library
  // cancels when its deadline passes, gRPC when the server's copy does) is
  // left to the engine's own deadline, at most kDeadlineCancelSlack away,
  // so that the read is counted as a timeout, not as a caller's cancel.
  void OnCancel() override {
    if (!read_id_.has_value()) return;
    if (absl::Now() >= call_deadline_ - kDeadlineCancelSlack) return;
    calls_.admission.engine().Cancel(*read_id_);
  }

  void OnDone() override {
    if (watch_token_ != 0) calls_.stalled.Unwatch(watch_token_);
    calls_.admission.Release(held_bytes_);
    delete this;
  }

  // gRPC's hook for reactors whose reactions are trivial (server_callback.h
  // marks it internal; gRPC's own DefaultReactor uses it): OnCancel and
  // OnDone then run on the thread that triggers them, often the engine
  // loop inside Finish, instead of after a hand-off to gRPC's executor
  // thread. Ours qualify: OnCancel queues an id for the engine (a mutex
  // and a wake-up), OnDone releases its slots (short critical sections)
  // and deletes; neither blocks for long. The hand-off cost a thread switch
  // per read, which on a virtual machine means waking a halted vCPU
  // (docs/BENCHMARKS.md).
  bool InternalInlineable() override { return true; }

 private:
  // StalledCalls' reaper thread, for an answer not taken in time. The
  // reactor is alive: OnDone unwatches (waiting for this to return) before
  // it deletes.
  void Cancel(bool first) override {
    // The answer is dropped once; a repeated cancel only asks gRPC again.
    if (first) calls_.admission.CountDropped(DropReason::kSendTimeout);
    context_->TryCancel();
  }

  // Engine loop thread. Nothing may touch `this` after FinishOnce: OnDone
  // may already have deleted it, inline or on another thread.
  void Complete(absl::StatusOr<hedge::EngineResponse> result) {
    if (!result.ok()) {
      FinishOnce(ToGrpcStatus(result.status()));
      return;
    }
    const int64_t bytes = AnswerBytes(*result);
    if (!calls_.admission.HoldAnswer(bytes)) {
      FinishOnce(ToGrpcStatus(calls_.admission.BufferFullError()));
      return;
    }
    held_bytes_ = bytes;
    FillReadResponse(*std::move(result), response_);
    watch_token_ = calls_.stalled.Watch(this, absl::Now());
    FinishOnce(grpc::Status::OK);
  }

  // The engine promises one completion per admitted read and none for a
  // refused one; the guard keeps Finish single even if that were broken.
  void FinishOnce(grpc::Status status) {
    if (finished_.exchange(true, std::memory_order_acq_rel)) return;
    Finish(std::move(status));
  }

  // Constant after construction.
  ReadService::Calls& calls_;
  grpc::CallbackServerContext* const context_;
  v1::ReadResponse* const response_;
  const absl::Time call_deadline_;

  // Set by the handler before gRPC may call OnCancel.
  std::optional<uint64_t> read_id_;
  std::atomic<bool> finished_{false};
  // Written by Complete before Finish, read by OnDone after it.
  int64_t held_bytes_ = 0;
  uint64_t watch_token_ = 0;
};

grpc::ServerUnaryReactor* Refuse(grpc::CallbackServerContext* context,
                                 grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

}  // namespace

ReadService::ReadService(hedge::Engine& engine, absl::Duration timeout,
                         DrainGate& gate, Rejections& rejections,
                         ResponseMemory& memory, StalledCalls& stalled)
    : calls_{ReadAdmission(engine, timeout, gate, rejections, memory),
             stalled} {}

grpc::ServerUnaryReactor* ReadService::Read(
    grpc::CallbackServerContext* context, const v1::ReadRequest* request,
    v1::ReadResponse* response) {
  const absl::Time call_deadline = CallDeadline(*context);
  absl::StatusOr<hedge::EngineRead> read =
      calls_.admission.Admit(*request, call_deadline);
  if (!read.ok()) return Refuse(context, ToGrpcStatus(read.status()));
  auto* reactor = new ReadReactor(calls_, context, response, call_deadline);
  reactor->Submit(*std::move(read));
  return reactor;
}

}  // namespace tailgate::server
