// nghttp2's callbacks: a request's frames become a Call (headers checked
// as they come, the message gathered), started once the request ends; a
// closed stream detaches its call. See read_door_impl.h.
//
// nghttp2 has already checked the HTTP/2 semantics of every request
// (pseudo-headers present and valid, field names and values well formed,
// content-length against DATA) and reset a stream that broke them; what is
// left here is gRPC's part.

#include <nghttp2/nghttp2.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/read_door/grpc_wire.h"
#include "server/read_door/read_door_impl.h"

namespace tailgate::server::read_door {
namespace {

constexpr absl::string_view kReadPath = "/tailgate.v1.HedgedRead/Read";
constexpr absl::string_view kReadManyPath = "/tailgate.v1.HedgedRead/ReadMany";
// What HPACK counts per header field on top of its name and value (RFC
// 7541 section 4.1), as SETTINGS_MAX_HEADER_LIST_SIZE does.
constexpr int64_t kHeaderFieldOverhead = 32;

// A header block that decodes to this many times max_header_bytes is an
// attack, not a call too large to serve: an HPACK bomb (one indexed field
// referenced thousands of times, a byte each on the wire, each reference
// decoded and checked in full on the loop thread).
constexpr int64_t kHeaderBombFactor = 4;

absl::string_view View(const uint8_t* data, size_t length) {
  return absl::string_view(reinterpret_cast<const char*>(data), length);
}

// Keeps the first refusal of a call.
void Refuse(absl::Status& refusal, absl::Status status) {
  if (refusal.ok()) refusal = std::move(status);
}

}  // namespace

int ReadDoor::Impl::OnBeginHeaders(nghttp2_session* session,
                                   const nghttp2_frame* frame,
                                   void* user_data) noexcept {
  auto* connection = static_cast<Connection*>(user_data);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  if (frame->hd.type != NGHTTP2_HEADERS ||
      frame->headers.cat != NGHTTP2_HCAT_REQUEST) {
    return 0;  // trailers of a request: nothing the door uses
  }
  if (!self->RequestBytesFit(*connection, kCallBytes)) {
    // No room for one more call, in the door or in the connection's
    // share: refused before it exists (clients retry REFUSED_STREAM, which
    // did nothing).
    nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
                              NGHTTP2_REFUSED_STREAM);
    return 0;
  }
  connection->budget.OnWork();
  auto* call = new Call(connection, frame->hd.stream_id, self->core_);
  self->CountRequestBytes(call, kCallBytes);
  call->begun = self->core_.engine().clock().Now();
  self->ArmReceiveSweep();
  connection->calls.insert(call);
  self->MarkBusy(connection);
  nghttp2_session_set_stream_user_data(session, frame->hd.stream_id, call);
  return 0;
}

int ReadDoor::Impl::OnHeader(nghttp2_session* session,
                             const nghttp2_frame* frame, const uint8_t* name,
                             size_t name_length, const uint8_t* value,
                             size_t value_length, uint8_t,
                             void* user_data) noexcept {
  auto* connection = static_cast<Connection*>(user_data);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  const int64_t field_bytes =
      static_cast<int64_t>(name_length + value_length) + kHeaderFieldOverhead;
  if (frame->hd.stream_id != connection->header_block_stream) {
    connection->header_block_stream = frame->hd.stream_id;
    connection->header_block_bytes = 0;
  }
  connection->header_block_bytes += field_bytes;
  if (connection->header_block_bytes >
      kHeaderBombFactor * self->options_.max_header_bytes) {
    // The connection ends now (GOAWAY ENHANCE_YOUR_CALM, sent if the
    // socket takes it): nghttp2 decodes nothing more of it.
    EndForAbuse(session, "header_block_too_large");
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  auto* call = static_cast<Call*>(
      nghttp2_session_get_stream_user_data(session, frame->hd.stream_id));
  if (call == nullptr || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  call->header_bytes += field_bytes;
  if (call->header_bytes > self->options_.max_header_bytes) {
    Refuse(call->refusal, absl::ResourceExhaustedError(absl::StrCat(
                              "request metadata larger than ",
                              self->options_.max_header_bytes, " bytes")));
    return 0;
  }
  const absl::string_view key = View(name, name_length);
  const absl::string_view text = View(value, value_length);
  if (key == ":path") {
    // Read, ReadMany, a method of the door's own services, or nothing
    // served here.
    if (text == kReadManyPath) {
      call->batch = std::make_unique<BatchCall>();
    } else if (text != kReadPath && !self->MakeServiceCall(call, text)) {
      Refuse(call->refusal,
             absl::UnimplementedError(
                 absl::StrCat("method ", text, " is not served on this port")));
    }
    return 0;
  }
  if (key == ":method") {
    if (text != "POST") {
      call->http_status = 405;
      Refuse(call->refusal,
             absl::UnimplementedError("gRPC calls are POST requests"));
    }
  } else if (key == "content-type") {
    // Media types are case-insensitive (RFC 9110, 8.3.1).
    call->grpc_content_type =
        absl::StartsWithIgnoreCase(text, "application/grpc") &&
        (text.size() == 16 || text[16] == '+' || text[16] == ';');
    if (!call->grpc_content_type) {
      call->http_status = 415;
      Refuse(call->refusal,
             absl::InternalError(absl::StrCat(
                 "content-type must be application/grpc, not ", text)));
    }
  } else if (key == "grpc-encoding") {
    // As the --listen server: a request that says its messages may be
    // compressed is refused as soon as it says so, whatever its messages
    // turn out to be (and before a compressed bomb is measured).
    if (text != "identity") {
      Refuse(call->refusal,
             absl::UnimplementedError(absl::StrCat(
                 "compression algorithm ", text,
                 " is not accepted (grpc-accept-encoding: identity)")));
    }
  } else if (key == "grpc-timeout") {
    absl::StatusOr<absl::Duration> timeout = ParseGrpcTimeout(text);
    if (timeout.ok()) {
      call->timeout = *timeout;
    } else {
      Refuse(call->refusal, timeout.status());
    }
  }
  return 0;
}

int ReadDoor::Impl::OnDataChunk(nghttp2_session* session, uint8_t,
                                int32_t stream_id, const uint8_t* data,
                                size_t length, void* user_data) noexcept {
  auto* connection = static_cast<Connection*>(user_data);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  auto* call = static_cast<Call*>(
      nghttp2_session_get_stream_user_data(session, stream_id));
  if (call == nullptr || !call->refusal.ok()) return 0;
  // A Read's message, or a service call's requests not answered yet: both
  // bounded alike; a ReadMany request by its own limit.
  const int64_t max_message = call->batch != nullptr
                                  ? self->batch_message_bytes_
                                  : self->options_.max_message_bytes;
  if (call->body.size() + length >
      kMessagePrefixBytes + static_cast<size_t>(max_message)) {
    self->ReleaseBody(call);
    Refuse(call->refusal,
           absl::ResourceExhaustedError(absl::StrCat(
               "request message larger than ", max_message, " bytes")));
    return 0;
  }
  if (!self->RequestBytesFit(*connection, static_cast<int64_t>(length))) {
    self->ReleaseBody(call);
    Refuse(call->refusal,
           absl::ResourceExhaustedError(absl::StrCat(
               "the sidecar holds as many request bytes as it may, in all "
               "(--max_grpc_memory_bytes ",
               self->options_.max_request_bytes, ") or for this connection (",
               self->connection_request_share_, "); try again")));
    return 0;
  }
  call->body.append(reinterpret_cast<const char*>(data), length);
  self->CountRequestBytes(call, static_cast<int64_t>(length));
  return 0;
}

int ReadDoor::Impl::OnFrame(nghttp2_session* session,
                            const nghttp2_frame* frame,
                            void* user_data) noexcept {
  auto* connection = static_cast<Connection*>(user_data);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  if (frame->hd.type == NGHTTP2_SETTINGS &&
      (frame->hd.flags & NGHTTP2_FLAG_ACK) == 0) {
    evtimer_del(connection->handshake_timer);  // the client has spoken
    return 0;
  }
  if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) {
    return 0;
  }
  auto* call = static_cast<Call*>(
      nghttp2_session_get_stream_user_data(session, frame->hd.stream_id));
  if (call == nullptr) return 0;
  const bool ended = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
  if (call->service != nullptr) {
    self->ContinueServiceCall(call, ended);
    return 0;
  }
  if (call->state != Call::State::kReceiving) return 0;
  // A request already refused (its path, metadata or message size) is
  // answered at once, without waiting for the rest of it: nghttp2 then
  // resets the stream (NO_ERROR), which tells the client to stop sending.
  if (ended || !call->refusal.ok()) self->EndRequest(call);
  return 0;
}

int ReadDoor::Impl::OnStreamClose(nghttp2_session* session, int32_t stream_id,
                                  uint32_t, void* user_data) noexcept {
  auto* connection = static_cast<Connection*>(user_data);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  auto* call = static_cast<Call*>(
      nghttp2_session_get_stream_user_data(session, stream_id));
  if (call == nullptr) return 0;
  nghttp2_session_set_stream_user_data(session, stream_id, nullptr);
  connection->calls.erase(call);
  if (connection->calls.empty()) self->MarkIdle(connection);
  self->Detach(call);
  return 0;
}

}  // namespace tailgate::server::read_door
