#include "server/grpc/read_service.h"

#include <grpc/support/time.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/grpc/grpc_status.h"
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

// One Read call. Created by the handler, finished exactly once (by the
// handler when the read is refused, else by the read's completion on the
// engine's loop thread), deleted in OnDone.
class ReadReactor final : public grpc::ServerUnaryReactor, StalledCall {
 public:
  ReadReactor(ReadCore& core, StalledCalls& stalled,
              grpc::CallbackServerContext* context, v1::ReadResponse* response)
      : stalled_(stalled),
        context_(context),
        response_(response),
        read_(core) {}

  // Called once, by the handler, before it returns the reactor. Until then
  // gRPC runs no reaction (OnCancel, OnDone) and defers a Finish, so the
  // engine may complete the read on its loop thread before Start returns.
  void Start(const v1::ReadRequest& request, absl::Time call_deadline) {
    std::optional<ReadError> refused = read_.Start(
        request, call_deadline,
        [this](ReadOutcome outcome) { Complete(std::move(outcome)); });
    if (refused.has_value()) FinishOnce(ToGrpcStatus(refused->status));
  }

  void OnCancel() override { read_.ClientGone(); }

  void OnDone() override {
    if (watch_token_ != 0) stalled_.Unwatch(watch_token_);
    read_.Finish();
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
  // StalledCalls' reaper thread, for an answer not taken by its send
  // deadline. The reactor is alive: OnDone unwatches (waiting for this to
  // return) before it deletes.
  void Cancel(bool first) override {
    // The answer is dropped once; a repeated cancel only asks gRPC again.
    if (first) read_.DropUnsent();
    context_->TryCancel();
  }

  // Engine loop thread. Nothing may touch `this` after FinishOnce: OnDone
  // may already have deleted it, inline or on another thread.
  void Complete(ReadOutcome outcome) {
    if (!outcome.answer.has_value()) {
      FinishOnce(ToGrpcStatus(outcome.error.status));
      return;
    }
    FillReadResponse(*std::move(outcome.answer), response_);
    watch_token_ = stalled_.Watch(this, absl::Now());
    FinishOnce(grpc::Status::OK);
  }

  // The core promises one completion per admitted read and none for a
  // refused one; the guard keeps Finish single even if that were broken.
  void FinishOnce(grpc::Status status) {
    if (finished_.exchange(true, std::memory_order_acq_rel)) return;
    Finish(std::move(status));
  }

  // Constant after construction.
  StalledCalls& stalled_;
  grpc::CallbackServerContext* const context_;
  v1::ReadResponse* const response_;

  ReadCall read_;
  std::atomic<bool> finished_{false};
  // Written by Complete before Finish, read by OnDone after it.
  uint64_t watch_token_ = 0;
};

}  // namespace

grpc::ServerUnaryReactor* ReadService::Read(
    grpc::CallbackServerContext* context, const v1::ReadRequest* request,
    v1::ReadResponse* response) {
  auto* reactor = new ReadReactor(core_, stalled_, context, response);
  reactor->Start(*request, CallDeadline(*context));
  return reactor;
}

}  // namespace tailgate::server
