#include "server/observability/http_endpoints.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <memory>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/net/listen_socket.h"
#include "server/observability/metrics.h"

namespace tailgate::server {
namespace {

// evhttp's own inactivity timeout, a backstop behind the deadlines below.
constexpr int kIdleTimeoutSeconds = 10;
// After a failed accept() (out of descriptors), how long the listener rests.
constexpr absl::Duration kAcceptPause = absl::Seconds(1);
constexpr ev_ssize_t kMaxHeaderBytes = 8 << 10;

constexpr ev_uint16_t kAllMethods =
    EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |
    EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |
    EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH;

// libevent needs its pthreads locking turned on once, before the first
// event_base, for event_base_loopbreak from another thread.
void UseThreads() {
  static std::once_flag once;
  std::call_once(once, [] { evthread_use_pthreads(); });
}

// evhttp sends a reply body even to HEAD: drop it here, keeping the length.
void Reply(evhttp_request* request, int code, const char* reason,
           const char* content_type, absl::string_view body) {
  evkeyvalq* headers = evhttp_request_get_output_headers(request);
  evhttp_add_header(headers, "Content-Type", content_type);
  evhttp_add_header(headers, "Cache-Control", "no-store");
  evbuffer* buffer = evbuffer_new();
  if (evhttp_request_get_command(request) == EVHTTP_REQ_HEAD) {
    evhttp_add_header(headers, "Content-Length",
                      absl::StrCat(body.size()).c_str());
  } else {
    evbuffer_add(buffer, body.data(), body.size());
  }
  evhttp_send_reply(request, code, reason, buffer);
  evbuffer_free(buffer);
}

constexpr char kTextPlain[] = "text/plain; charset=utf-8";

}  // namespace

struct HttpEndpoints::Connection {
  HttpEndpoints* self;
  // Created in OnAccept; the listener holds a reference until OnRegister
  // has run, so the pointer stays valid (and unique as a map key) even if
  // evhttp frees the connection first.
  bufferevent* bev;
  bool refused;                        // accepted at the limit, none idle
  evhttp_connection* evcon = nullptr;  // once attached
  bool registering = true;             // OnRegister has not run yet
  bool closed = false;
  // Bytes of a request have arrived since the accept or the last answer,
  // or an answer is going out: not idle.
  bool busy = false;
  bool answering = false;   // headers complete, the answer going out
  uint64_t idle_since = 0;  // idle_order_ when it last turned idle
  // The header deadline, then, while answering, the send deadline.
  event* deadline = nullptr;
  event* registration = nullptr;  // runs OnRegister once, after accept
  evbuffer_cb_entry* input_watch = nullptr;  // until MarkClosed
};

absl::StatusOr<std::unique_ptr<HttpEndpoints>> HttpEndpoints::Start(
    const ListenAddress& address, Handlers handlers,
    HttpEndpointsLimits limits) {
  if (address.is_unix) {
    return absl::InvalidArgumentError(
        "the metrics listener takes host:port, not a unix socket");
  }
  UseThreads();
  std::unique_ptr<HttpEndpoints> endpoints(
      new HttpEndpoints(std::move(handlers), limits));
  if (absl::Status bound = endpoints->Bind(address); !bound.ok()) {
    return bound;
  }
  event_base* base = endpoints->base_;
  endpoints->thread_ = std::thread([base] { event_base_dispatch(base); });
  return endpoints;
}

HttpEndpoints::HttpEndpoints(Handlers handlers, HttpEndpointsLimits limits)
    : handlers_(std::move(handlers)), limits_(limits) {}

absl::Status HttpEndpoints::Bind(const ListenAddress& address) {
  base_ = event_base_new();
  if (base_ != nullptr) http_ = evhttp_new(base_);
  if (http_ != nullptr) {
    stop_ = event_new(base_, -1, 0, &HttpEndpoints::OnStop, base_);
    report_timer_ = evtimer_new(base_, &HttpEndpoints::OnReportTimer, this);
  }
  if (stop_ == nullptr || report_timer_ == nullptr) {
    return absl::InternalError("cannot create the metrics HTTP server");
  }
  evhttp_set_allowed_methods(http_, kAllMethods);
  // A scrape is one small GET: idle or oversized clients are cut off.
  evhttp_set_timeout(http_, kIdleTimeoutSeconds);
  evhttp_set_max_headers_size(http_, kMaxHeaderBytes);
  evhttp_set_max_body_size(http_, 0);
  evhttp_set_gencb(http_, &HttpEndpoints::OnRequest, this);
  evhttp_set_bevcb(http_, &HttpEndpoints::OnAccept, this);
  evhttp_bound_socket* socket = evhttp_bind_socket_with_handle(
      http_, address.host.c_str(), static_cast<ev_uint16_t>(address.port));
  if (socket == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", address.ToString()));
  }
  absl::StatusOr<int> port = LocalPort(evhttp_bound_socket_get_fd(socket));
  if (!port.ok()) return port.status();
  address_ = address.WithPort(*port);
  listener_ = evhttp_bound_socket_get_listener(socket);
  accept_backoff_ = AcceptBackoff::Install(listener_, base_, kAcceptPause,
                                           handlers_.accept_failed);
  return absl::OkStatus();
}

HttpEndpoints::~HttpEndpoints() {
  if (thread_.joinable()) {
    event_active(stop_, EV_READ, 0);
    thread_.join();
  }
  if (stop_ != nullptr) event_free(stop_);
  if (report_timer_ != nullptr) event_free(report_timer_);
  accept_backoff_.reset();  // before evhttp_free frees its listener
  // Runs OnClosed for every connection evhttp still holds.
  if (http_ != nullptr) evhttp_free(http_);
  // Left: those whose OnRegister never ran.
  for (auto& [bev, connection] : connections_) {
    if (!connection->closed) MarkClosed(connection.get());
    event_free(connection->deadline);
    event_free(connection->registration);
    bufferevent_decref(bev);
  }
  connections_.clear();
  if (base_ != nullptr) event_base_free(base_);
}

// evhttp asks for a bufferevent for each accepted connection: the one hook
// it offers at accept time. The evhttp_connection does not exist yet, so
// OnRegister, on the next loop iteration, finds it, sets the close callback
// and closes it if it was refused; a first request may come earlier
// (Handle then attaches it). The header deadline runs from here.
bufferevent* HttpEndpoints::OnAccept(event_base* base, void* arg) noexcept {
  auto* self = static_cast<HttpEndpoints*>(arg);
  bufferevent* bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
  if (bev == nullptr) return nullptr;  // evhttp makes its own, untracked
  bool refused = false;
  if (self->open_ >= self->limits_.max_connections) {
    if (self->CloseOldestIdle()) {
      ++self->idle_closed_;
    } else {
      ++self->refused_;
      refused = true;
      // The refusal closes this one on the next loop turn: accept no more
      // until then (libevent stops its accept loop once disabled).
      self->accepting_paused_ = true;
      evconnlistener_disable(self->listener_);
    }
    self->CountClosed();
  }
  bufferevent_incref(bev);
  ++self->open_;
  auto connection =
      std::make_unique<Connection>(Connection{self, bev, refused});
  connection->deadline =
      evtimer_new(base, &HttpEndpoints::OnDeadline, connection.get());
  connection->registration =
      evtimer_new(base, &HttpEndpoints::OnRegister, connection.get());
  connection->input_watch = evbuffer_add_cb(
      bufferevent_get_input(bev), &HttpEndpoints::OnInput, connection.get());
  const timeval now = {0, 0};
  if (connection->deadline == nullptr || connection->registration == nullptr ||
      evtimer_add(connection->registration, &now) != 0) {
    // Without its events the connection cannot be tracked: evhttp gets a
    // bufferevent of its own making (the same as a failed allocation).
    if (connection->deadline != nullptr) event_free(connection->deadline);
    if (connection->registration != nullptr) {
      event_free(connection->registration);
    }
    evbuffer_remove_cb_entry(bufferevent_get_input(bev),
                             connection->input_watch);
    --self->open_;
    bufferevent_decref(bev);
    bufferevent_free(bev);
    return nullptr;
  }
  connection->idle_since = ++self->idle_order_;
  self->Arm(connection.get(), self->limits_.header_timeout);
  self->connections_.emplace(bev, std::move(connection));
  self->Publish();
  return bev;
}

bool HttpEndpoints::CloseOldestIdle() {
  Connection* oldest = nullptr;
  for (auto& [bev, connection] : connections_) {
    Connection* c = connection.get();
    if (c->closed || c->busy || c->evcon == nullptr) continue;
    if (oldest == nullptr || c->idle_since < oldest->idle_since) oldest = c;
  }
  if (oldest == nullptr) return false;
  evhttp_connection_free(oldest->evcon);  // runs OnClosed
  return true;
}

void HttpEndpoints::OnRegister(int, short, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  HttpEndpoints* self = connection->self;
  bufferevent* bev = connection->bev;
  if (connection->evcon == nullptr && !connection->closed) {
    // evhttp passes its evhttp_connection as the bufferevent's callback
    // argument (libevent 2.1, http.c); bufferevent_free clears it, so null
    // means evhttp already closed the connection.
    bufferevent_data_cb read, write;
    bufferevent_event_cb event;
    void* evcon = nullptr;
    bufferevent_getcb(bev, &read, &write, &event, &evcon);
    if (evcon == nullptr) {
      self->MarkClosed(connection);
    } else {
      self->Attach(connection, static_cast<evhttp_connection*>(evcon));
    }
  }
  if (!connection->closed && connection->refused && !connection->answering) {
    // Runs OnClosed, which leaves the clean-up below to this function
    // while `registering` is set.
    evhttp_connection_free(connection->evcon);
  }
  connection->registering = false;
  if (connection->closed) self->Forget(connection);
  bufferevent_decref(bev);
  self->Publish();
}

void HttpEndpoints::Attach(Connection* connection, evhttp_connection* evcon) {
  connection->evcon = evcon;
  evhttp_connection_set_closecb(evcon, &HttpEndpoints::OnClosed, connection);
}

void HttpEndpoints::MarkClosed(Connection* connection) {
  connection->closed = true;
  --open_;
  // Back at the limit: the next accept may find an idle connection to close.
  if (accepting_paused_ && open_ <= limits_.max_connections) {
    accepting_paused_ = false;
    evconnlistener_enable(listener_);
  }
  evtimer_del(connection->deadline);
  if (connection->input_watch != nullptr) {
    evbuffer_remove_cb_entry(bufferevent_get_input(connection->bev),
                             connection->input_watch);
    connection->input_watch = nullptr;
  }
}

// REQUIRES: closed, and OnRegister has run (its event is not pending).
void HttpEndpoints::Forget(Connection* connection) {
  event_free(connection->deadline);
  event_free(connection->registration);
  connections_.erase(connection->bev);  // deletes `connection`
}

void HttpEndpoints::Arm(Connection* connection, absl::Duration timeout) {
  const timeval tv = absl::ToTimeval(timeout);
  evtimer_add(connection->deadline, &tv);  // replaces a pending deadline
}

// The first bytes of a request make the connection busy; evhttp parses
// them after this runs (the input's callbacks are not deferred).
void HttpEndpoints::OnInput(evbuffer*, const evbuffer_cb_info* info,
                            void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  if (info->n_added == 0 || connection->busy) return;
  connection->busy = true;
  connection->self->Publish();
}

// The header deadline or the send deadline has passed.
void HttpEndpoints::OnDeadline(int, short, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  HttpEndpoints* self = connection->self;
  if (connection->closed) return;
  if (connection->evcon == nullptr) {
    // Not registered yet (a deadline shorter than a loop turn): close at
    // registration.
    connection->refused = true;
    return;
  }
  evhttp_connection_free(connection->evcon);  // runs OnClosed
  self->Publish();
}

// evhttp has written the whole answer; it frees the request next, then
// closes the connection or waits for its next request.
void HttpEndpoints::OnReplyComplete(evhttp_request*, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  HttpEndpoints* self = connection->self;
  if (connection->closed) return;
  connection->answering = false;
  // Bytes of a pipelined request may be waiting already.
  connection->busy =
      evbuffer_get_length(bufferevent_get_input(connection->bev)) != 0;
  connection->idle_since = ++self->idle_order_;
  self->Arm(connection, self->limits_.header_timeout);
  self->Publish();
}

// evhttp is about to free the connection: the client closed it, the
// listener closed it (a deadline, the limit) or evhttp_free runs.
void HttpEndpoints::OnClosed(evhttp_connection*, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  HttpEndpoints* self = connection->self;
  if (connection->closed) return;
  self->MarkClosed(connection);
  if (!connection->registering) self->Forget(connection);
  self->Publish();
}

// Calls connections_closed now, or at the end of the running interval.
void HttpEndpoints::CountClosed() {
  if (evtimer_pending(report_timer_, nullptr)) {
    report_due_ = true;
    return;
  }
  Report();
}

void HttpEndpoints::Report() {
  report_due_ = false;
  const timeval tv = absl::ToTimeval(limits_.report_interval);
  evtimer_add(report_timer_, &tv);
  if (handlers_.connections_closed) {
    handlers_.connections_closed(idle_closed_, refused_);
  }
}

void HttpEndpoints::OnReportTimer(int, short, void* arg) noexcept {
  auto* self = static_cast<HttpEndpoints*>(arg);
  if (self->report_due_) self->Report();
}

void HttpEndpoints::Publish() {
  int64_t idle = 0;
  for (const auto& [bev, connection] : connections_) {
    const Connection& c = *connection;
    if (!c.closed && !c.busy && c.evcon != nullptr) ++idle;
  }
  open_published_.store(open_);
  idle_published_.store(idle);
}

void HttpEndpoints::OnStop(int /*fd*/, short /*what*/, void* base) noexcept {
  event_base_loopbreak(static_cast<event_base*>(base));
}

void HttpEndpoints::OnRequest(evhttp_request* request, void* self) noexcept {
  static_cast<HttpEndpoints*>(self)->Handle(request);
}

void HttpEndpoints::Handle(evhttp_request* request) {
  evhttp_connection* evcon = evhttp_request_get_connection(request);
  auto it = connections_.find(evhttp_connection_get_bufferevent(evcon));
  if (it != connections_.end() && !it->second->closed) {
    Connection* connection = it->second.get();
    if (connection->evcon == nullptr) Attach(connection, evcon);
    connection->busy = true;
    connection->answering = true;
    Arm(connection, limits_.send_timeout);
    evhttp_request_set_on_complete_cb(request, &HttpEndpoints::OnReplyComplete,
                                      connection);
    Publish();
    if (connection->refused) {
      evhttp_add_header(evhttp_request_get_output_headers(request),
                        "Connection", "close");
      Reply(request, 503, "Service Unavailable", kTextPlain,
            "too many connections\n");
      return;
    }
  }
  const evhttp_cmd_type method = evhttp_request_get_command(request);
  if (method != EVHTTP_REQ_GET && method != EVHTTP_REQ_HEAD) {
    evhttp_add_header(evhttp_request_get_output_headers(request), "Allow",
                      "GET, HEAD");
    Reply(request, 405, "Method Not Allowed", kTextPlain,
          "method not allowed\n");
    return;
  }
  const char* path =
      evhttp_uri_get_path(evhttp_request_get_evhttp_uri(request));
  const absl::string_view route = path == nullptr ? "" : path;
  if (route == "/metrics") {
    Reply(request, 200, "OK", kMetricsContentType, handlers_.metrics());
  } else if (route == "/healthz") {
    const absl::Status live =
        handlers_.live ? handlers_.live() : absl::OkStatus();
    if (live.ok()) {
      Reply(request, 200, "OK", kTextPlain, "ok\n");
    } else {
      Reply(request, 503, "Service Unavailable", kTextPlain,
            absl::StrCat(live.message(), "\n"));
    }
  } else if (route == "/readyz") {
    if (handlers_.ready()) {
      Reply(request, 200, "OK", kTextPlain, "ready\n");
    } else {
      Reply(request, 503, "Service Unavailable", kTextPlain, "draining\n");
    }
  } else {
    Reply(request, 404, "Not Found", kTextPlain, "not found\n");
  }
}

}  // namespace tailgate::server
