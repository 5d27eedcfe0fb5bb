// Calls at the read door: admission and submission of the read, the
// delivery of its result, the answer's frames, and the send timeout. See
// read_door_impl.h.

#include <event2/event.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "proto/tailgate/v1/tailgate.pb.h"
#include "server/read_door/grpc_response.h"
#include "server/read_door/grpc_wire.h"
#include "server/read_door/read_door_impl.h"
#include "server/read_door/read_response_wire.h"

namespace tailgate::server::read_door {

void ReadDoor::Impl::EndRequest(Call* call) {
  if (!call->refusal.ok() || !call->grpc_content_type) {
    Start(call);  // refused: no slot taken
    return;
  }
  call->state = Call::State::kReady;
  call->connection->ready.push_back(call);
}

void ReadDoor::Impl::StartReady(Connection* connection) {
  // A call reset meanwhile has left the list (Detach).
  std::vector<Call*> ready = std::move(connection->ready);
  connection->ready.clear();
  for (Call* call : ready) Start(call);
}

bool ReadDoor::Impl::TakeRequest(Call* call,
                                 google::protobuf::MessageLite& request) {
  absl::StatusOr<absl::string_view> message = UnaryMessage(call->body);
  const bool parsed =
      message.ok() && request.ParseFromArray(message->data(),
                                             static_cast<int>(message->size()));
  ReleaseBody(call);
  if (!message.ok()) {
    Answer(call, message.status());
    return false;
  }
  if (!parsed) {
    Answer(call, absl::InvalidArgumentError(absl::StrCat(
                     "the request message is not a ", request.GetTypeName())));
    return false;
  }
  return true;
}

void ReadDoor::Impl::Start(Call* call) {
  if (call->refusal.ok() && !call->grpc_content_type) {
    call->http_status = 415;
    call->refusal =
        absl::InternalError("content-type must be application/grpc");
  }
  if (!call->refusal.ok()) {
    ReleaseBody(call);
    Answer(call, call->refusal);
    return;
  }
  if (call->batch != nullptr) {
    StartBatch(call);
    return;
  }
  v1::ReadRequest request;
  if (!TakeRequest(call, request)) return;
  Connection* connection = call->connection;
  if (!connection->reads->TryTake()) {
    core_.CountRejection(RejectReason::kTooManyCalls);
    Answer(call, absl::ResourceExhaustedError(absl::StrCat(
                     "this connection has ", connection->reads->held(),
                     " reads in flight or unsent (ReadMany's included); at "
                     "most ",
                     options_.max_reads_per_connection,
                     " per connection (7/8 of --max_requests)")));
    return;
  }
  const absl::Time call_deadline = call->timeout.has_value()
                                       ? absl::Now() + *call->timeout
                                       : absl::InfiniteFuture();
  // This is the engine's loop thread: the read starts before the loop
  // sleeps again, and its callback runs here too, in a later step of the
  // loop (never inside Start).
  std::optional<ReadError> refused = call->read.Start(
      request, call_deadline, [this, call](ReadOutcome outcome) {
        door_thread_.AssertOnOwner();
        --outstanding_;
        Deliver(call, std::move(outcome));
        if (stopping_) MaybeFinishTeardown();
      });
  if (refused.has_value()) {
    connection->reads->Give();
    Answer(call, refused->status);
    return;
  }
  call->state = Call::State::kReading;
  ++outstanding_;
  call->counts_read = true;
}

void ReadDoor::Impl::Deliver(Call* call, ReadOutcome outcome) {
  Connection* connection = call->connection;
  if (connection == nullptr) {  // the stream or its connection has closed
    Free(call);
    return;
  }
  if (!outcome.answer.has_value()) {
    Answer(call, outcome.error.status);
    Flush(connection);
    return;
  }
  // The answer counts against --max_buffered_bytes until its stream
  // closes (Free finishes the read), and against its connection's share.
  const int64_t bytes = call->read.held_bytes();
  if (options_.max_answer_bytes_per_connection > 0 &&
      connection->answer_bytes + bytes >
          options_.max_answer_bytes_per_connection) {
    call->read.Finish();  // its bytes and slot back at once
    core_.CountDropped(DropReason::kBufferFull);
    Answer(call,
           MakeReadError(
               ReadEnd::kBufferFull,
               absl::StrCat("answers waiting for this connection's client "
                            "are at its share of --max_buffered_bytes (",
                            options_.max_answer_bytes_per_connection, ")"))
               .status);
    Flush(connection);
    return;
  }
  connection->answer_bytes += bytes;
  call->counted_answer_bytes = bytes;
  // Its body is the engine's, moved.
  call->answer = FrameReadResponse(*std::move(outcome.answer));
  Answer(call, absl::OkStatus());
  Flush(connection);
}

void ReadDoor::Impl::Answer(Call* call, const absl::Status& status) {
  call->state = Call::State::kAnswering;
  Connection* connection = call->connection;
  if (status.ok()) {
    nghttp2_data_provider body;
    body.source.ptr = call;
    body.read_callback = &Impl::ReadAnswer;
    if (SubmitResponseHeaders(connection->wire.session, call->stream_id,
                              body) != 0) {
      nghttp2_submit_rst_stream(connection->wire.session, NGHTTP2_FLAG_NONE,
                                call->stream_id, NGHTTP2_INTERNAL_ERROR);
      return;
    }
    ArmSendTimer(connection);
    return;
  }
  // Trailers only: one HEADERS frame that ends the stream.
  if (SubmitTrailersOnly(connection->wire.session, call->stream_id,
                         call->http_status, status) != 0) {
    nghttp2_submit_rst_stream(connection->wire.session, NGHTTP2_FLAG_NONE,
                              call->stream_id, NGHTTP2_INTERNAL_ERROR);
  }
}

void ReadDoor::Impl::ArmSendTimer(Connection* connection) {
  if (!evtimer_pending(connection->send_timer, nullptr)) {
    const timeval timeout = absl::ToTimeval(options_.send_timeout);
    evtimer_add(connection->send_timer, &timeout);
  }
}

ssize_t ReadDoor::Impl::ReadAnswer(nghttp2_session* session, int32_t stream_id,
                                   uint8_t* buffer, size_t length,
                                   uint32_t* data_flags,
                                   nghttp2_data_source* source,
                                   void*) noexcept {
  auto* call = static_cast<Call*>(source->ptr);
  const size_t n = call->answer.CopyOut(call->answer_sent, buffer, length);
  call->answer_sent += n;
  if (call->answer_sent == call->answer.size()) {
    *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    if (SubmitTrailers(session, stream_id, absl::OkStatus()) != 0) {
      return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // resets the stream
    }
  }
  return static_cast<ssize_t>(n);
}

// Answers whose client has not taken them within --send_timeout (its
// stream's flow-control window held shut, or the socket not read) are
// reset and counted as dropped: their bytes are held against
// --max_buffered_bytes until then.
void ReadDoor::Impl::OnSendTimeout(evutil_socket_t, short, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  const absl::Time now = absl::Now();
  absl::Time next = absl::InfiniteFuture();
  for (Call* call : connection->calls) {
    if (call->state != Call::State::kAnswering) continue;
    // A Read's answer, a ReadMany item or a service's message being sent.
    const absl::Time deadline =
        call->service != nullptr ? call->service->send_deadline
        : call->batch != nullptr ? call->batch->send_deadline
                                 : call->read.send_deadline();
    if (deadline <= now) {
      if (call->service != nullptr) {
        call->service->send_deadline = absl::InfiniteFuture();
      } else if (call->batch != nullptr) {
        call->batch->send_deadline = absl::InfiniteFuture();
      } else {
        call->read.DropUnsent();
      }
      nghttp2_submit_rst_stream(connection->wire.session, NGHTTP2_FLAG_NONE,
                                call->stream_id, NGHTTP2_CANCEL);
    } else {
      next = std::min(next, deadline);
    }
  }
  if (next != absl::InfiniteFuture()) {
    const timeval timeout = absl::ToTimeval(next - now);
    evtimer_add(connection->send_timer, &timeout);
  }
  self->Flush(connection);
}

void ReadDoor::Impl::Detach(Call* call) {
  if (Connection* connection = call->connection) {
    // Its share of the connection's request bytes goes back now; the
    // door's, when the call is freed.
    connection->request_bytes -=
        kCallBytes + static_cast<int64_t>(call->body.size()) +
        (call->batch != nullptr ? call->batch->charged_bytes : 0);
    if (call->counts_read) connection->reads->Give();
    connection->answer_bytes -= call->counted_answer_bytes;
    if (call->state == Call::State::kReady) {
      std::vector<Call*>& ready = connection->ready;
      ready.erase(std::find(ready.begin(), ready.end(), call));
    }
  }
  call->connection = nullptr;
  if (call->batch != nullptr && call->batch->reads != nullptr) {
    DetachBatch(call);
    return;
  }
  if (call->state != Call::State::kReading) {
    Free(call);
    return;
  }
  // The engine's callback frees the call (Deliver).
  call->read.ClientGone();
}

void ReadDoor::Impl::Free(Call* call) {
  ReleaseBody(call);
  if (call->service != nullptr) ReleaseServiceCall(call);
  CountRequestBytes(call, -kCallBytes);
  if (call->batch != nullptr) {
    CountRequestBytes(call, -call->batch->charged_bytes);
  }
  delete call;  // finishes its read: the slot and the answer's bytes
}

void ReadDoor::Impl::ReleaseBody(Call* call) {
  CountRequestBytes(call, -static_cast<int64_t>(call->body.size()));
  std::string().swap(call->body);
}

void ReadDoor::Impl::CountRequestBytes(Call* call, int64_t bytes) {
  request_bytes_ += bytes;
  if (call->connection != nullptr) call->connection->request_bytes += bytes;
}

bool ReadDoor::Impl::RequestBytesFit(const Connection& connection,
                                     int64_t bytes) const {
  return request_bytes_ + bytes <= options_.max_request_bytes &&
         connection.request_bytes + bytes <= connection_request_share_;
}

}  // namespace tailgate::server::read_door
