#include "server/read/read_call.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/read/read_descriptor.h"

namespace tailgate::server {
namespace {

ReadError BufferFullError(const ResponseMemory& memory) {
  return MakeReadError(
      ReadEnd::kBufferFull,
      absl::StrCat("answers waiting to be sent are at the sidecar's "
                   "max_buffered_bytes (",
                   memory.max_bytes(), ")"));
}

}  // namespace

absl::Status ReadCore::ServiceBufferFullError() const {
  return BufferFullError(memory_).status;
}

std::optional<ReadError> ReadCall::Start(
    const v1::ReadRequest& request, absl::Time call_deadline, ReadDone done,
    std::shared_ptr<hedge::BatchCredits> batch) {
  absl::StatusOr<hedge::EngineRead> read =
      EngineReadFromRequest(request, core_.limits_.timeout);
  if (!read.ok()) {
    core_.rejections_.Add(RejectReason::kInvalidArgument);
    return MakeReadError(ReadEnd::kInvalidArgument, read.status().message());
  }
  if (!core_.gate_.TryEnter()) {
    core_.rejections_.Add(RejectReason::kDraining);
    return MakeReadError(ReadEnd::kDraining, "server is draining");
  }
  switch (core_.memory_.TryAdmit()) {
    case ResponseMemory::Admission::kAdmitted:
      break;
    case ResponseMemory::Admission::kTooManyCalls:
      core_.gate_.Exit();
      core_.rejections_.Add(RejectReason::kTooManyCalls);
      return MakeReadError(ReadEnd::kTooManyCalls,
                           "too many reads in flight (max_requests)");
    case ResponseMemory::Admission::kBufferFull:
      core_.gate_.Exit();
      core_.rejections_.Add(RejectReason::kBufferFull);
      return BufferFullError(core_.memory_);
  }
  holds_slot_ = true;
  call_deadline_ = call_deadline;
  read->batch = std::move(batch);
  read->deadline =
      EngineDeadline(call_deadline, absl::Now(), core_.engine_.clock().Now());
  done_ = std::move(done);
  // From the engine's loop thread the read starts before the loop sleeps
  // again; its callback runs in a later step of the loop, never inside
  // Submit.
  absl::StatusOr<uint64_t> id = core_.engine_.Submit(
      *std::move(read), [this](absl::StatusOr<hedge::EngineResponse> result) {
        Complete(std::move(result));
      });
  if (!id.ok()) {
    ReadError error = ReadErrorFromEngine(id.status());
    if (error.end == ReadEnd::kUnknownUpstream) {
      core_.rejections_.Add(RejectReason::kUnknownUpstream);
    }
    done_ = nullptr;
    Finish();
    return error;
  }
  read_id_ = *id;
  return std::nullopt;
}

void ReadCall::ClientGone() {
  if (!read_id_.has_value()) return;
  if (absl::Now() >= call_deadline_ - kDeadlineCancelSlack) return;
  core_.engine_.Cancel(*read_id_);  // nothing happens once it completed
}

void ReadCall::Shutdown() {
  if (!read_id_.has_value()) return;
  shutting_down_.store(true, std::memory_order_release);
  core_.engine_.Cancel(*read_id_);
}

void ReadCall::Complete(absl::StatusOr<hedge::EngineResponse> result) {
  ReadOutcome outcome;
  if (!result.ok()) {
    outcome.error = ReadErrorFromEngine(result.status());
    if (outcome.error.end == ReadEnd::kCancelled &&
        shutting_down_.load(std::memory_order_acquire)) {
      outcome.error = ShuttingDownError();
    }
  } else {
    const int64_t bytes = AnswerBytes(*result);
    if (core_.memory_.TryHold(bytes)) {
      const absl::Time now = absl::Now();
      core_.last_answer_.store(absl::ToUnixNanos(now),
                               std::memory_order_relaxed);
      held_bytes_ = bytes;
      send_deadline_ = now + core_.limits_.send_timeout;
      outcome.answer = *std::move(result);
    } else {
      core_.rejections_.AddDropped(DropReason::kBufferFull);
      outcome.error = BufferFullError(core_.memory_);
    }
  }
  // The door may finish, even destroy, this call inside done: nothing
  // touches `this` after it.
  ReadDone done = std::move(done_);
  done(std::move(outcome));
}

void ReadCall::DropUnsent() {
  if (send_deadline_ == absl::InfiniteFuture()) return;
  send_deadline_ = absl::InfiniteFuture();
  core_.rejections_.AddDropped(DropReason::kSendTimeout);
}

void ReadCall::Finish() {
  if (!holds_slot_) return;
  holds_slot_ = false;
  core_.memory_.Done(held_bytes_);
  held_bytes_ = 0;
  core_.gate_.Exit();
}

int64_t AnswerBytes(const hedge::EngineResponse& response) {
  int64_t bytes = static_cast<int64_t>(response.body.size()) + 64;
  for (const auto& header : response.headers) {
    bytes += static_cast<int64_t>(header.name.size() + header.value.size()) + 8;
  }
  return bytes;
}

}  // namespace tailgate::server
