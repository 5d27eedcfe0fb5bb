// Relayed calls: every call of a method other than Read, passed on stream
// for stream to the gRPC library's server over the connection's Relay (an
// HTTP/2 client session of the door's own, over a socket pair). See
// read_door_impl.h.
//
// Each direction is bounded: the request bytes the server has not taken
// count against max_request_bytes (at most max_message_bytes per call);
// the answer bytes the client has not taken are at most the relay's
// flow-control window, which the door widens (nghttp2_session_consume)
// only as the client's stream takes them. Neither session is driven from
// inside the other's callbacks: a side that got something to send is
// flushed from the loop (FlushSoon).

#include <event2/event.h>
#include <nghttp2/nghttp2.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/read_door/read_door_impl.h"

namespace tailgate::server::read_door {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

// nghttp2 copies names and values on submit.
std::vector<nghttp2_nv> HeaderList(const Fields& fields) {
  std::vector<nghttp2_nv> list;
  list.reserve(fields.size());
  for (const auto& [name, value] : fields) {
    list.push_back({reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())),
                    name.size(), value.size(), NGHTTP2_NV_FLAG_NONE});
  }
  return list;
}

template <typename T>
T* StreamData(nghttp2_session* session, int32_t stream_id) {
  return static_cast<T*>(
      nghttp2_session_get_stream_user_data(session, stream_id));
}

}  // namespace

void ReadDoor::Impl::StartRelayed(Call* call) {
  Connection* connection = call->connection;
  call->state = Call::State::kRelayed;
  if (stopping_) {
    FailRelayed(call, absl::UnavailableError("tailgate is shutting down"));
    return;
  }
  if (connection->relay == nullptr) {
    absl::Status opened = OpenRelay(connection);
    if (!opened.ok()) {
      FailRelayed(call, absl::UnavailableError(absl::StrCat(
                            "cannot reach the gRPC server behind this port: ",
                            opened.message())));
      return;
    }
  }
  Relay* relay = connection->relay.get();
  if (relay->going_away) {
    FailRelayed(call, absl::UnavailableError(
                          "the gRPC server behind this port is shutting down"));
    return;
  }
  Relayed& relayed = *call->relayed;
  const std::vector<nghttp2_nv> fields = HeaderList(relayed.fields);
  nghttp2_data_provider body;
  body.source.ptr = nullptr;
  body.read_callback = &Impl::ReadRelayRequest;
  const int32_t id = nghttp2_submit_request(
      relay->wire.session, nullptr, fields.data(), fields.size(),
      relayed.request_ended && relayed.to_server.empty() ? nullptr : &body,
      call);
  Fields().swap(relayed.fields);
  if (id < 0) {
    FailRelayed(call, absl::UnavailableError(absl::StrCat(
                          "cannot open a stream to the gRPC server: ",
                          nghttp2_strerror(id))));
    return;
  }
  relayed.server_stream = id;
  relayed.server_open = true;
  FlushSoon(relay->wire);
}

absl::Status ReadDoor::Impl::OpenRelay(Connection* connection) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
                 pair) != 0) {
    return absl::UnavailableError(
        absl::StrCat("socketpair: ", std::strerror(errno)));
  }
  auto relay = std::make_unique<Relay>(Relay{this, connection});
  Relay* r = relay.get();
  Wire& wire = r->wire;
  wire.fd = pair[0];
  wire.readable = event_new(base_, wire.fd, EV_READ | EV_PERSIST,
                            &Impl::OnRelayReadable, r);
  wire.writable =
      event_new(base_, wire.fd, EV_WRITE, &Impl::OnRelayWritable, r);
  wire.kick = event_new(base_, -1, 0, &Impl::OnRelayKick, r);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
  };
  if (wire.readable == nullptr || wire.writable == nullptr ||
      wire.kick == nullptr ||
      nghttp2_session_client_new2(&wire.session, relay_callbacks_, r,
                                  relay_options_) != 0 ||
      nghttp2_submit_settings(wire.session, NGHTTP2_FLAG_NONE, settings,
                              std::size(settings)) != 0 ||
      event_add(wire.readable, nullptr) != 0) {
    FreeWire(wire);
    close(pair[1]);
    return absl::ResourceExhaustedError("out of memory");
  }
  // The server's end is the server's from here on, whatever happens.
  if (absl::Status handed = options_.relay(pair[1]); !handed.ok()) {
    FreeWire(wire);
    return handed;
  }
  connection->relay = std::move(relay);
  return absl::OkStatus();
}

bool ReadDoor::Impl::FollowRelayedFraming(Relayed& relayed,
                                          const uint8_t* data,
                                          size_t length) const {
  size_t i = 0;
  while (i < length) {
    if (relayed.message_left > 0) {
      const size_t n = static_cast<size_t>(
          std::min<uint64_t>(relayed.message_left, length - i));
      relayed.message_left -= n;
      i += n;
      continue;
    }
    const size_t n = std::min(sizeof(relayed.prefix) - relayed.prefix_seen,
                              length - i);
    std::memcpy(relayed.prefix + relayed.prefix_seen, data + i, n);
    relayed.prefix_seen += n;
    i += n;
    if (relayed.prefix_seen < sizeof(relayed.prefix)) break;
    // The compressed flag, then the length, big-endian.
    const uint64_t announced = (uint64_t{relayed.prefix[1]} << 24) |
                               (uint64_t{relayed.prefix[2]} << 16) |
                               (uint64_t{relayed.prefix[3]} << 8) |
                               uint64_t{relayed.prefix[4]};
    if (announced > static_cast<uint64_t>(options_.max_message_bytes)) {
      return false;
    }
    relayed.message_left = announced;
    relayed.prefix_seen = 0;
  }
  return true;
}

void ReadDoor::Impl::ForwardRequest(Call* call) {
  Relayed& relayed = *call->relayed;
  Connection* connection = call->connection;
  if (!relayed.server_open || connection->relay == nullptr) return;
  nghttp2_session_resume_data(connection->relay->wire.session,
                              relayed.server_stream);
  FlushSoon(connection->relay->wire);
}

void ReadDoor::Impl::FailRelayed(Call* call, const absl::Status& status) {
  Relayed& relayed = *call->relayed;
  LeaveServerStream(call);
  request_bytes_ -= static_cast<int64_t>(relayed.to_server.size());
  std::string().swap(relayed.to_server);
  Connection* connection = call->connection;
  if (!relayed.response_started) {
    relayed.response_started = true;
    relayed.response_ended = true;
    Answer(call, status);  // trailers only
  } else {
    call->state = Call::State::kAnswering;
    nghttp2_submit_rst_stream(connection->wire.session, NGHTTP2_FLAG_NONE,
                              call->stream_id, NGHTTP2_INTERNAL_ERROR);
  }
  FlushSoon(connection->wire);
}

void ReadDoor::Impl::LeaveServerStream(Call* call) {
  Relayed& relayed = *call->relayed;
  Relay* relay =
      call->connection != nullptr ? call->connection->relay.get() : nullptr;
  if (relay != nullptr && relayed.server_stream >= 0) {
    nghttp2_session* session = relay->wire.session;
    if (relayed.server_open) {
      nghttp2_session_set_stream_user_data(session, relayed.server_stream,
                                           nullptr);
      nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE,
                                relayed.server_stream, NGHTTP2_CANCEL);
    }
    // The relay's window is given back for answer bytes nobody will take.
    if (!relayed.to_client.empty()) {
      nghttp2_session_consume(session, relayed.server_stream,
                              relayed.to_client.size());
    }
    FlushSoon(relay->wire);
  }
  relayed.server_open = false;
  std::string().swap(relayed.to_client);
}

void ReadDoor::Impl::FlushRelay(Relay* relay) {
  if (Send(relay->wire, options_.send_timeout) == WireState::kClosed) {
    DropRelay(relay);
  }
}

void ReadDoor::Impl::DropRelay(Relay* relay) {
  Connection* connection = relay->connection;
  std::unique_ptr<Relay> dropped = std::move(connection->relay);
  for (Call* call : connection->calls) {
    if (call->state != Call::State::kRelayed) continue;
    if (call->relayed->server_open) {
      call->relayed->server_open = false;
      FailRelayed(call, absl::UnavailableError(
                            "the gRPC server behind this port closed the "
                            "call's connection"));
    }
  }
  FreeWire(dropped->wire);
  FlushSoon(connection->wire);
}

void ReadDoor::Impl::OnRelayReadable(evutil_socket_t, short,
                                     void* arg) noexcept {
  auto* relay = static_cast<Relay*>(arg);
  Impl* self = relay->door;
  self->door_thread_.AssertOnOwner();
  if (Receive(relay->wire) == WireState::kClosed) {
    self->DropRelay(relay);
    return;
  }
  self->FlushRelay(relay);
}

void ReadDoor::Impl::OnRelayWritable(evutil_socket_t, short what,
                                     void* arg) noexcept {
  auto* relay = static_cast<Relay*>(arg);
  Impl* self = relay->door;
  self->door_thread_.AssertOnOwner();
  if ((what & EV_TIMEOUT) != 0) {  // the server took nothing for that long
    self->DropRelay(relay);
    return;
  }
  self->FlushRelay(relay);
}

void ReadDoor::Impl::OnRelayKick(evutil_socket_t, short, void* arg) noexcept {
  auto* relay = static_cast<Relay*>(arg);
  relay->door->door_thread_.AssertOnOwner();
  relay->door->FlushRelay(relay);
}

int ReadDoor::Impl::OnRelayHeader(nghttp2_session* session,
                                  const nghttp2_frame* frame,
                                  const uint8_t* name, size_t name_length,
                                  const uint8_t* value, size_t value_length,
                                  uint8_t, void* user_data) noexcept {
  auto* relay = static_cast<Relay*>(user_data);
  relay->door->door_thread_.AssertOnOwner();
  Call* call = StreamData<Call>(session, frame->hd.stream_id);
  if (call == nullptr) return 0;
  Fields* fields = nullptr;
  if (frame->headers.cat == NGHTTP2_HCAT_RESPONSE) {
    fields = &call->relayed->response_fields;
  } else if (frame->headers.cat == NGHTTP2_HCAT_HEADERS) {
    fields = &call->relayed->trailers;
  } else {
    return 0;
  }
  fields->emplace_back(
      std::string(reinterpret_cast<const char*>(name), name_length),
      std::string(reinterpret_cast<const char*>(value), value_length));
  return 0;
}

int ReadDoor::Impl::OnRelayFrame(nghttp2_session* session,
                                 const nghttp2_frame* frame,
                                 void* user_data) noexcept {
  auto* relay = static_cast<Relay*>(user_data);
  Impl* self = relay->door;
  self->door_thread_.AssertOnOwner();
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    relay->going_away = true;
    return 0;
  }
  if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) {
    return 0;
  }
  Call* call = StreamData<Call>(session, frame->hd.stream_id);
  if (call == nullptr || call->state != Call::State::kRelayed) return 0;
  Relayed& relayed = *call->relayed;
  nghttp2_session* client = relay->connection->wire.session;
  const bool ended = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
  if (ended) relayed.response_ended = true;
  if (frame->hd.type == NGHTTP2_HEADERS &&
      frame->headers.cat == NGHTTP2_HCAT_RESPONSE) {
    const std::vector<nghttp2_nv> fields = HeaderList(relayed.response_fields);
    nghttp2_data_provider body;
    body.source.ptr = nullptr;
    body.read_callback = &Impl::ReadRelayResponse;
    // Trailers only: the answer is this one HEADERS frame.
    const int submitted =
        nghttp2_submit_response(client, call->stream_id, fields.data(),
                                fields.size(), ended ? nullptr : &body);
    Fields().swap(relayed.response_fields);
    relayed.response_started = true;
    if (submitted != 0) {
      nghttp2_submit_rst_stream(client, NGHTTP2_FLAG_NONE, call->stream_id,
                                NGHTTP2_INTERNAL_ERROR);
    }
  } else if (relayed.response_started) {
    nghttp2_session_resume_data(client, call->stream_id);
  }
  FlushSoon(relay->connection->wire);
  return 0;
}

int ReadDoor::Impl::OnRelayDataChunk(nghttp2_session* session, uint8_t,
                                     int32_t stream_id, const uint8_t* data,
                                     size_t length, void* user_data) noexcept {
  auto* relay = static_cast<Relay*>(user_data);
  relay->door->door_thread_.AssertOnOwner();
  Call* call = StreamData<Call>(session, stream_id);
  if (call == nullptr || call->state != Call::State::kRelayed) {
    // Nobody takes these: the window is given back at once.
    nghttp2_session_consume(session, stream_id, length);
    return 0;
  }
  call->relayed->to_client.append(reinterpret_cast<const char*>(data), length);
  return 0;
}

int ReadDoor::Impl::OnRelayStreamClose(nghttp2_session* session,
                                       int32_t stream_id, uint32_t error_code,
                                       void* user_data) noexcept {
  auto* relay = static_cast<Relay*>(user_data);
  Impl* self = relay->door;
  self->door_thread_.AssertOnOwner();
  Call* call = StreamData<Call>(session, stream_id);
  if (call == nullptr) return 0;
  nghttp2_session_set_stream_user_data(session, stream_id, nullptr);
  Relayed& relayed = *call->relayed;
  relayed.server_open = false;
  // Request bytes the server will never take.
  self->request_bytes_ -= static_cast<int64_t>(relayed.to_server.size());
  std::string().swap(relayed.to_server);
  if (relayed.response_ended || call->state != Call::State::kRelayed) return 0;
  // Reset by the server before its answer ended: the client's stream is
  // reset with the same code, as the server would have reset it had it
  // served the connection itself (REFUSED_STREAM: retry; ENHANCE_YOUR_CALM,
  // its memory quota: RESOURCE_EXHAUSTED).
  call->state = Call::State::kAnswering;
  nghttp2_submit_rst_stream(
      relay->connection->wire.session, NGHTTP2_FLAG_NONE, call->stream_id,
      error_code != NGHTTP2_NO_ERROR ? error_code : NGHTTP2_INTERNAL_ERROR);
  FlushSoon(relay->connection->wire);
  return 0;
}

ssize_t ReadDoor::Impl::ReadRelayRequest(nghttp2_session* session,
                                         int32_t stream_id, uint8_t* buffer,
                                         size_t length, uint32_t* data_flags,
                                         nghttp2_data_source*,
                                         void* user_data) noexcept {
  auto* relay = static_cast<Relay*>(user_data);
  Impl* self = relay->door;
  self->door_thread_.AssertOnOwner();
  Call* call = StreamData<Call>(session, stream_id);
  if (call == nullptr) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  Relayed& relayed = *call->relayed;
  const size_t n = std::min(length, relayed.to_server.size());
  if (n == 0 && !relayed.request_ended) return NGHTTP2_ERR_DEFERRED;
  std::memcpy(buffer, relayed.to_server.data(), n);
  relayed.to_server.erase(0, n);
  self->request_bytes_ -= static_cast<int64_t>(n);
  if (relayed.to_server.empty() && relayed.request_ended) {
    *data_flags |= NGHTTP2_DATA_FLAG_EOF;
  }
  return static_cast<ssize_t>(n);
}

ssize_t ReadDoor::Impl::ReadRelayResponse(nghttp2_session* session,
                                          int32_t stream_id, uint8_t* buffer,
                                          size_t length, uint32_t* data_flags,
                                          nghttp2_data_source*,
                                          void* user_data) noexcept {
  auto* connection = static_cast<Connection*>(user_data);
  connection->door->door_thread_.AssertOnOwner();
  Call* call = StreamData<Call>(session, stream_id);
  if (call == nullptr || call->relayed == nullptr) {
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  }
  Relayed& relayed = *call->relayed;
  const size_t n = std::min(length, relayed.to_client.size());
  if (n == 0 && !relayed.response_ended) return NGHTTP2_ERR_DEFERRED;
  std::memcpy(buffer, relayed.to_client.data(), n);
  relayed.to_client.erase(0, n);
  if (n > 0 && connection->relay != nullptr && relayed.server_stream >= 0) {
    // Taken by the client: the server may send as much again (the
    // connection's window even once the stream has closed).
    nghttp2_session_consume(connection->relay->wire.session,
                            relayed.server_stream, n);
    FlushSoon(connection->relay->wire);
  }
  if (relayed.to_client.empty() && relayed.response_ended) {
    *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    if (!relayed.trailers.empty()) {
      *data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
      const std::vector<nghttp2_nv> trailers = HeaderList(relayed.trailers);
      if (nghttp2_submit_trailer(session, stream_id, trailers.data(),
                                 trailers.size()) != 0) {
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // resets the stream
      }
    }
  }
  return static_cast<ssize_t>(n);
}

}  // namespace tailgate::server::read_door
