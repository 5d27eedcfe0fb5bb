// Connections of the read door: accept, the connection limit, the
// handshake timeout, bytes between the socket and nghttp2, close. See
// read_door_impl.h.

#include <event2/event.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "server/read_door/read_door_impl.h"

namespace tailgate::server::read_door {
namespace {

// Read from the socket per system call; a request is far smaller.
constexpr size_t kReceiveChunkBytes = 16 << 10;
// Reads per readable event before the loop serves others.
constexpr int kReceivesPerEvent = 4;
// nghttp2 is asked for more frames only while less than this waits for the
// socket: the door buffers at most about this much per connection.
constexpr size_t kMaxPendingOutputBytes = 64 << 10;
// Output buffer kept once everything is written: what small answers need.
constexpr size_t kKeptOutputBytes = 16 << 10;

}  // namespace

void ReadDoor::Impl::OnAccept(evconnlistener*, evutil_socket_t fd,
                              sockaddr* address, int, void* arg) noexcept {
  auto* self = static_cast<Impl*>(arg);
  self->door_thread_.AssertOnOwner();
  if (self->stopping_) {
    close(fd);
    return;
  }
  if (static_cast<int64_t>(self->connections_.size()) >=
      self->options_.max_connections) {
    // At the limit a new client takes the place of the connection idle
    // longest (told GOAWAY NO_ERROR, as far as its socket takes it now):
    // connections that hold nothing cannot lock clients out. With a call
    // open on every connection, the new one is refused.
    Connection* idle = self->LongestIdle();
    if (idle == nullptr) {
      ++self->refused_;
      if (self->options_.refused) self->options_.refused(self->refused_);
      close(fd);  // after the count: a client that sees it closed finds it
      return;
    }
    self->CloseIdle(idle);
  }
  if (address->sa_family == AF_INET || address->sa_family == AF_INET6) {
    const int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  }
  auto connection = std::make_unique<Connection>(Connection{self});
  Connection* c = connection.get();
  c->reads =
      std::make_shared<ReadShare>(self->options_.max_reads_per_connection);
  c->reads->set_room([self, c] {
    self->door_thread_.AssertOnOwner();
    self->ResumeBatchesLater(c);
  });
  Wire& wire = c->wire;
  wire.fd = fd;
  wire.readable =
      event_new(self->base_, fd, EV_READ | EV_PERSIST, &Impl::OnReadable, c);
  wire.writable = event_new(self->base_, fd, EV_WRITE, &Impl::OnWritable, c);
  c->handshake_timer = evtimer_new(self->base_, &Impl::OnHandshakeTimeout, c);
  c->send_timer = evtimer_new(self->base_, &Impl::OnSendTimeout, c);
  c->idle_timer = evtimer_new(self->base_, &Impl::OnIdleTimeout, c);
  self->connections_.emplace(c, std::move(connection));
  const timeval handshake = absl::ToTimeval(self->options_.handshake_timeout);
  if (wire.readable == nullptr || wire.writable == nullptr ||
      c->handshake_timer == nullptr || c->send_timer == nullptr ||
      c->idle_timer == nullptr ||
      nghttp2_session_server_new2(&wire.session, self->callbacks_, c,
                                  self->session_options_) != 0 ||
      event_add(wire.readable, nullptr) != 0 ||
      evtimer_add(c->handshake_timer, &handshake) != 0) {
    self->Close(c);
    return;
  }
  self->MarkIdle(c);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
       static_cast<uint32_t>(self->options_.max_streams_per_connection)},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE,
       static_cast<uint32_t>(self->options_.max_header_bytes)},
  };
  if (nghttp2_submit_settings(wire.session, NGHTTP2_FLAG_NONE, settings,
                              std::size(settings)) != 0) {
    self->Close(c);
    return;
  }
  self->Flush(c);
}

void ReadDoor::Impl::OnReadable(evutil_socket_t, short, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  if (Receive(connection->wire) == WireState::kClosed) {
    self->Close(connection);
    return;
  }
  self->StartReady(connection);
  self->Flush(connection);
}

void ReadDoor::Impl::OnWritable(evutil_socket_t, short what,
                                void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  if ((what & EV_TIMEOUT) != 0) {
    // The socket has taken nothing for --send_timeout: the client reads
    // nothing, not even the RST_STREAM of an answer it did not take, so
    // the stream would never close and its answer would stay held against
    // --max_buffered_bytes. Answers whose own send timeout has not come
    // yet are dropped with it.
    for (Call* call : connection->calls) {
      if (call->state == Call::State::kAnswering) call->read.DropUnsent();
    }
    self->Close(connection);
    return;
  }
  self->Flush(connection);
}

// No call has been open on the connection for --idle_timeout.
void ReadDoor::Impl::OnIdleTimeout(evutil_socket_t, short, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  connection->door->door_thread_.AssertOnOwner();
  connection->door->CloseIdle(connection);
}

void ReadDoor::Impl::CloseIdle(Connection* connection) {
  // Counted first: a client that sees its connection closed finds it.
  ++idle_closed_;
  if (options_.idle_closed) options_.idle_closed(idle_closed_);
  nghttp2_session_terminate_session(connection->wire.session, NGHTTP2_NO_ERROR);
  Send(connection->wire, absl::ZeroDuration());
  Close(connection);
}

// The client sent no SETTINGS (its preface) in time: a connection that
// only holds a descriptor.
void ReadDoor::Impl::OnHandshakeTimeout(evutil_socket_t, short,
                                        void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  connection->door->door_thread_.AssertOnOwner();
  connection->door->Close(connection);
}

ReadDoor::Impl::WireState ReadDoor::Impl::Receive(Wire& wire) {
  uint8_t buffer[kReceiveChunkBytes];
  for (int i = 0; i < kReceivesPerEvent; ++i) {
    const ssize_t received = recv(wire.fd, buffer, sizeof(buffer), 0);
    if (received < 0 && (errno == EAGAIN || errno == EINTR)) {
      return WireState::kOpen;
    }
    // The peer has gone, or the socket failed.
    if (received <= 0) return WireState::kClosed;
    // nghttp2 takes every byte or fails; its callbacks run inside.
    if (nghttp2_session_mem_recv(wire.session, buffer,
                                 static_cast<size_t>(received)) < 0) {
      // The door gave up on the peer (a callback failed): what nghttp2
      // queued for it (GOAWAY) goes out if the socket takes it now.
      Send(wire, absl::ZeroDuration());
      return WireState::kClosed;
    }
    if (static_cast<size_t>(received) < sizeof(buffer)) return WireState::kOpen;
  }
  return WireState::kOpen;
}

ReadDoor::Impl::WireState ReadDoor::Impl::Send(Wire& wire,
                                               absl::Duration stall) {
  nghttp2_session* session = wire.session;
  std::string& output = wire.output;
  for (;;) {
    while (output.size() - wire.output_sent < kMaxPendingOutputBytes) {
      const uint8_t* frames = nullptr;
      const ssize_t length = nghttp2_session_mem_send(session, &frames);
      if (length < 0) return WireState::kClosed;
      if (length == 0) break;
      output.append(reinterpret_cast<const char*>(frames),
                    static_cast<size_t>(length));
    }
    if (wire.output_sent == output.size()) break;
    const ssize_t sent = send(wire.fd, output.data() + wire.output_sent,
                              output.size() - wire.output_sent, MSG_NOSIGNAL);
    if (sent < 0 && (errno == EAGAIN || errno == EINTR)) {
      // Armed from the first byte the socket would not take; the owner's
      // writable callback closes the wire if it takes none for `stall`.
      if (!event_pending(wire.writable, EV_WRITE, nullptr)) {
        const timeval timeout = absl::ToTimeval(stall);
        event_add(wire.writable, &timeout);
      }
      return WireState::kOpen;
    }
    if (sent < 0) return WireState::kClosed;
    wire.output_sent += static_cast<size_t>(sent);
    if (wire.output_sent < output.size()) continue;
    output.clear();
    wire.output_sent = 0;
    if (nghttp2_session_want_write(session) == 0) break;
  }
  if (output.empty() && output.capacity() > kKeptOutputBytes) {
    // After a large answer: a connection left idle keeps no more.
    std::string().swap(output);
  }
  if (nghttp2_session_want_read(session) == 0 &&
      nghttp2_session_want_write(session) == 0 && output.empty()) {
    return WireState::kClosed;  // GOAWAY both ways, or a fatal error, sent
  }
  return WireState::kOpen;
}

void ReadDoor::Impl::FreeWire(Wire& wire) {
  // nghttp2_session_del calls no callback.
  if (wire.session != nullptr) nghttp2_session_del(wire.session);
  for (event* e : {wire.readable, wire.writable}) {
    if (e != nullptr) event_free(e);
  }
  if (wire.fd >= 0) close(wire.fd);
  wire = Wire();
}

void ReadDoor::Impl::Flush(Connection* connection) {
  if (Send(connection->wire, options_.send_timeout) == WireState::kClosed) {
    Close(connection);
  }
}

ReadDoor::Impl::Connection* ReadDoor::Impl::LongestIdle() {
  return idle_.empty() ? nullptr : idle_.front();
}

void ReadDoor::Impl::MarkIdle(Connection* connection) {
  if (connection->idle_entry.has_value()) return;
  connection->idle_entry = idle_.insert(idle_.end(), connection);
  const timeval timeout = absl::ToTimeval(options_.idle_timeout);
  evtimer_add(connection->idle_timer, &timeout);
}

void ReadDoor::Impl::MarkBusy(Connection* connection) {
  if (!connection->idle_entry.has_value()) return;
  idle_.erase(*connection->idle_entry);
  connection->idle_entry.reset();
  evtimer_del(connection->idle_timer);
}

void ReadDoor::Impl::Close(Connection* connection) {
  // Calls whose read is in flight stay with the engine's callback; the
  // others go now.
  MarkBusy(connection);  // leaves the idle list
  to_flush_.erase(connection);
  to_resume_.erase(connection);
  connection->reads->set_room(nullptr);  // its batches may outlive it
  std::vector<Call*> calls(connection->calls.begin(), connection->calls.end());
  connection->calls.clear();
  for (Call* call : calls) Detach(call);
  FreeWire(connection->wire);
  for (event* e : {connection->handshake_timer, connection->send_timer,
                   connection->idle_timer}) {
    if (e != nullptr) event_free(e);
  }
  connections_.erase(connection);  // deletes `connection`
}

}  // namespace tailgate::server::read_door
