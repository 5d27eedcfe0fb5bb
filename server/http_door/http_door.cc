// HttpDoor's lifecycle: Start binds evhttp on the engine's loop; the
// destructor cancels the reads still in flight and, once the engine has
// completed them, frees evhttp and every connection there
// (http_door_impl.h).

#include "server/http_door/http_door.h"

#include <event2/event.h>
#include <event2/http.h>
#include <unistd.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/http_door/http_door_impl.h"
#include "server/net/listen_socket.h"
#include "server/net/loop_guest.h"

namespace tailgate::server::http_door {
namespace {

// Every method reaches the handler, which answers 405 itself (evhttp's own
// answer to a method it was not told about is 501 without Allow).
constexpr ev_uint16_t kAllMethods =
    EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |
    EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |
    EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH;

// evhttp reads a body up to this size before the handler refuses the
// request (400: reads carry no body); a larger one gets evhttp's 413.
constexpr ev_ssize_t kMaxBodyBytes = 4 << 10;

}  // namespace

absl::Status HttpDoor::Impl::Bind(event_base* base) {
  door_thread_.BindToCurrentThread();
  door_thread_.AssertOnOwner();
  // The engine's base batches the epoll changes of one loop turn into one
  // epoll_ctl per descriptor (its change list): the door re-arms a
  // connection's interest several times per read (hold while the engine
  // has it, give back, write).
  base_ = base;
  http_ = evhttp_new(base_);
  if (http_ == nullptr) {
    return absl::InternalError("cannot create the HTTP door");
  }
  evhttp_set_allowed_methods(http_, kAllMethods);
  evhttp_set_default_content_type(http_, nullptr);
  evhttp_set_max_headers_size(http_, options_.max_header_bytes);
  evhttp_set_max_body_size(http_, kMaxBodyBytes);
  const timeval inactivity = absl::ToTimeval(options_.header_timeout);
  evhttp_set_timeout_tv(http_, &inactivity);
  evhttp_set_gencb(http_, &Impl::OnRequest, this);
  evhttp_set_bevcb(http_, &Impl::OnAccept, this);

  const ListenAddress& address = options_.address;
  evhttp_bound_socket* socket = nullptr;
  if (address.is_unix) {
    absl::StatusOr<int> fd = OpenListeningSocket(address);
    if (!fd.ok()) return fd.status();
    socket = evhttp_accept_socket_with_handle(http_, *fd);
    if (socket == nullptr) {
      close(*fd);
      return absl::InternalError("cannot serve HTTP on the unix socket");
    }
    address_ = address;
    listener_ = evhttp_bound_socket_get_listener(socket);
    accept_backoff_ = AcceptBackoff::Install(listener_, base_, absl::Seconds(1),
                                             options_.accept_failed);
    return absl::OkStatus();
  }
  socket = evhttp_bind_socket_with_handle(
      http_, address.host.c_str(), static_cast<ev_uint16_t>(address.port));
  if (socket == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", address.ToString()));
  }
  absl::StatusOr<int> port = LocalPort(evhttp_bound_socket_get_fd(socket));
  if (!port.ok()) return port.status();
  address_ = address.WithPort(*port);
  listener_ = evhttp_bound_socket_get_listener(socket);
  accept_backoff_ = AcceptBackoff::Install(listener_, base_, absl::Seconds(1),
                                           options_.accept_failed);
  return absl::OkStatus();
}

HttpDoor::Impl::~Impl() {
  TearDownFromOutside(
      loop_, door_thread_,
      [this] {
        door_thread_.AssertOnOwner();
        BeginTeardown();
      },
      [this] {
        door_thread_.AssertOnOwner();
        FinishTeardown();
      },
      torn_down_);
}

// Reads still in flight (a drain that timed out) are cancelled; once the
// engine has completed them (Deliver), FinishTeardown frees the rest: the
// engine must not call back into a freed door.
void HttpDoor::Impl::BeginTeardown() {
  stopping_ = true;
  for (auto& [bev, connection] : connections_) {
    Exchange* exchange = connection->exchange;
    if (exchange != nullptr && exchange->state == Exchange::State::kReading) {
      exchange->read.Shutdown();
    }
  }
  if (outstanding_ == 0) FinishTeardown();
}

void HttpDoor::Impl::FinishTeardown() {
  accept_backoff_.reset();  // before evhttp_free frees its listener
  // Closes every connection; OnClosed ends their exchanges.
  if (http_ != nullptr) evhttp_free(http_);
  http_ = nullptr;
  for (auto& [bev, connection] : connections_) {
    if (connection->registering) bufferevent_decref(bev);
    for (event* timer : {connection->deadline, connection->registration}) {
      if (timer != nullptr) event_free(timer);
    }
  }
  connections_.clear();
  torn_down_.Release();
}

absl::StatusOr<std::unique_ptr<HttpDoor>> HttpDoor::Start(
    const HttpDoorOptions& options, ReadCore& core, hedge::EventLoop& loop) {
  auto impl = std::make_unique<Impl>(options, core, loop);
  Impl* door = impl.get();
  absl::Status bound = RunOnLoopAndWait(
      loop, [door](event_base* base) { return door->Bind(base); });
  if (!bound.ok()) return bound;
  return std::unique_ptr<HttpDoor>(new HttpDoor(std::move(impl)));
}

HttpDoor::HttpDoor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpDoor::~HttpDoor() = default;

const ListenAddress& HttpDoor::address() const { return impl_->address(); }

}  // namespace tailgate::server::http_door
