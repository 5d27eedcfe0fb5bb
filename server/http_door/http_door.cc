#include "server/http_door/http_door.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "hedge/sync/mutex.h"
#include "hedge/sync/thread_checker.h"
#include "server/http_door/http_mapping.h"
#include "server/listen_socket.h"

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

// While a read is in flight the door reads on, to see the client close;
// bytes it sends meanwhile (pipelined requests) wait for evhttp, up to
// this much, then reading pauses until the answer is written.
constexpr size_t kHeldInputBytes = 64 << 10;

HttpMethod MethodOf(evhttp_request* request) {
  switch (evhttp_request_get_command(request)) {
    case EVHTTP_REQ_GET:
      return HttpMethod::kGet;
    case EVHTTP_REQ_HEAD:
      return HttpMethod::kHead;
    default:
      return HttpMethod::kOther;
  }
}

HttpRequestIn RequestIn(evhttp_request* request) {
  HttpRequestIn in;
  in.method = MethodOf(request);
  const char* uri = evhttp_request_get_uri(request);
  in.target = uri == nullptr ? "" : uri;
  const evkeyvalq* headers = evhttp_request_get_input_headers(request);
  for (const evkeyval* header = headers->tqh_first; header != nullptr;
       header = header->next.tqe_next) {
    in.headers.push_back({header->key, header->value});
  }
  return in;
}

void FreeBody(const void* /*data*/, size_t /*length*/, void* body) {
  delete static_cast<std::string*>(body);
}

}  // namespace

class HttpDoor::Impl {
 public:
  Impl(const HttpDoorOptions& options, ReadAdmission& admission)
      : options_(options), admission_(admission) {}
  ~Impl();

  // Runs `step` on the engine's loop thread, with the loop's base, and
  // waits for its status; FAILED_PRECONDITION if the loop is not running.
  absl::Status OnLoop(absl::AnyInvocable<absl::Status(event_base*)> step);
  // Loop thread: makes evhttp on the engine's base and binds.
  absl::Status Bind(event_base* base);
  const ListenAddress& address() const { return address_; }

 private:
  struct Exchange;

  // One accepted connection, from accept until evhttp frees it. evhttp owns
  // the evhttp_connection and its bufferevent. Door thread only.
  struct Connection {
    Impl* door;
    // Created in OnAccept; the door holds a reference until OnRegister has
    // run, so the pointer stays valid (and unique as a map key) even if
    // evhttp frees the connection first.
    bufferevent* bev;
    bool over_limit;            // accepted beyond max_connections
    evhttp_connection* evcon = nullptr;  // once attached
    bool registering = true;             // OnRegister has not run yet
    bool closed = false;
    event* header_timer = nullptr;  // armed while waiting for a request
    Exchange* exchange = nullptr;   // the request being answered, if any
    event* registration = nullptr;  // runs OnRegister once, after accept
  };

  // One request being answered. Door thread only.
  struct Exchange {
    enum class State {
      kReading,  // the engine has the read; the connection is held
      kWriting,  // the answer is handed to evhttp
    };
    Connection* connection;  // null once the connection is gone
    evhttp_request* request;  // null once the connection is gone
    bool head = false;
    bool holds_slot = false;  // an admission slot, released when over
    int64_t held_bytes = 0;   // reserved by HoldAnswer for the answer
    State state = State::kWriting;
    uint64_t read_id = 0;
    // evhttp's bufferevent callbacks and read watermarks while held.
    bufferevent_data_cb evhttp_read = nullptr;
    bufferevent_data_cb evhttp_write = nullptr;
    bufferevent_event_cb evhttp_event = nullptr;
    void* evhttp_arg = nullptr;
    size_t low_watermark = 0;
    size_t high_watermark = 0;
  };

  // libevent callbacks (door thread).
  static bufferevent* OnAccept(event_base* base, void* arg) noexcept;
  static void OnRegister(evutil_socket_t, short, void* arg) noexcept;
  static void OnClosed(evhttp_connection* evcon, void* arg) noexcept;
  static void OnRequest(evhttp_request* request, void* arg) noexcept;
  static void OnHeaderTimeout(evutil_socket_t, short, void* arg) noexcept;
  static void OnHeldEvent(bufferevent* bev, short what, void* arg) noexcept;
  static void OnReplyComplete(evhttp_request* request, void* arg) noexcept;
  static void OnRawWritten(bufferevent* bev, void* arg) noexcept;
  static void OnRawEvent(bufferevent* bev, short what, void* arg) noexcept;

  void Attach(Connection* connection, evhttp_connection* evcon)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void MarkClosed(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void ArmHeaderTimer(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void Handle(Connection* connection, evhttp_request* request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Starts an engine read for `exchange`, or answers its refusal.
  void StartRead(Exchange* exchange, const DoorRead& read)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void Hold(Exchange* exchange) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Gives the connection back to evhttp. REQUIRES: Send follows at once.
  void Unhold(Exchange* exchange) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Writes `reply` as the answer to `exchange`'s request; the exchange ends
  // in OnReplyComplete or OnClosed.
  void Send(Exchange* exchange, HttpReply reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Writes a sidecar-produced answer to a request that started no read.
  void Answer(Connection* connection, evhttp_request* request,
              HttpReply reply) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Writes `reply` straight to the connection, then closes it.
  void AnswerRawAndClose(Connection* connection, const HttpReply& reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The engine has completed `exchange`'s read (its callback, on this
  // thread).
  void Deliver(Exchange* exchange,
               absl::StatusOr<hedge::EngineResponse> result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void End(Exchange* exchange) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Writes what evhttp queued on `connection` now (see the definition).
  void WriteNow(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The destructor's steps: cancel the reads in flight, then, once the
  // engine has completed them all, free evhttp and every connection.
  void BeginTeardown() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void FinishTeardown() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Constant after Bind.
  const HttpDoorOptions options_;
  ReadAdmission& admission_;
  event_base* base_ = nullptr;  // the engine's
  ListenAddress address_;

  // The engine's loop thread (bound by Bind); the destructor's if the loop
  // is not running.
  hedge::ThreadChecker door_thread_;
  evhttp* http_ ABSL_GUARDED_BY(door_thread_) = nullptr;
  std::unique_ptr<AcceptBackoff> accept_backoff_ ABSL_GUARDED_BY(door_thread_);
  absl::flat_hash_map<bufferevent*, std::unique_ptr<Connection>> connections_
      ABSL_GUARDED_BY(door_thread_);
  int64_t open_connections_ ABSL_GUARDED_BY(door_thread_) = 0;
  bool stopping_ ABSL_GUARDED_BY(door_thread_) = false;  // the destructor runs
  // Engine reads whose callback has not run yet.
  int64_t outstanding_ ABSL_GUARDED_BY(door_thread_) = 0;

  // Set on the loop thread once FinishTeardown has run; the destructor
  // waits for it.
  hedge::Mutex torn_down_mu_;
  hedge::CondVar torn_down_changed_;
  bool torn_down_ ABSL_GUARDED_BY(torn_down_mu_) = false;
};

absl::Status HttpDoor::Impl::OnLoop(
    absl::AnyInvocable<absl::Status(event_base*)> step) {
  hedge::Mutex mu;
  hedge::CondVar ran_changed;
  bool ran = false;
  absl::Status result;
  absl::Status posted = admission_.engine().RunOnLoop(
      [&](event_base* base) {
        absl::Status status = step(base);
        hedge::MutexLock lock(&mu);
        result = std::move(status);
        ran = true;
        ran_changed.SignalAll();
      });
  if (!posted.ok()) return posted;
  hedge::MutexLock lock(&mu);
  while (!ran) ran_changed.Wait(&mu);
  return result;
}

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
    accept_backoff_ = AcceptBackoff::Install(
        evhttp_bound_socket_get_listener(socket), base_, absl::Seconds(1),
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
  accept_backoff_ = AcceptBackoff::Install(
      evhttp_bound_socket_get_listener(socket), base_, absl::Seconds(1),
      options_.accept_failed);
  return absl::OkStatus();
}

HttpDoor::Impl::~Impl() {
  const absl::Status posted = OnLoop([this](event_base*) {
    door_thread_.AssertOnOwner();
    BeginTeardown();
    return absl::OkStatus();
  });
  if (!posted.ok()) {
    // The loop is not running (it never started, or the engine broke the
    // order of destruction): no callback can come any more, so this thread
    // takes the door's state and frees it.
    door_thread_.Detach();
    door_thread_.AssertOnOwner();
    FinishTeardown();
  }
  hedge::MutexLock lock(&torn_down_mu_);
  while (!torn_down_) torn_down_changed_.Wait(&torn_down_mu_);
}

// Reads still in flight (a drain that timed out) are cancelled; once the
// engine has completed them (Deliver), FinishTeardown frees the rest: the
// engine must not call back into a freed door.
void HttpDoor::Impl::BeginTeardown() {
  stopping_ = true;
  for (auto& [bev, connection] : connections_) {
    Exchange* exchange = connection->exchange;
    if (exchange != nullptr && exchange->state == Exchange::State::kReading) {
      admission_.engine().Cancel(exchange->read_id);
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
    for (event* timer : {connection->header_timer, connection->registration}) {
      if (timer != nullptr) event_free(timer);
    }
  }
  connections_.clear();
  hedge::MutexLock lock(&torn_down_mu_);
  torn_down_ = true;
  torn_down_changed_.SignalAll();
}

// evhttp asks for a bufferevent for each accepted connection: the one hook
// it offers at accept time. The evhttp_connection does not exist yet, so
// OnRegister, on the next loop iteration, finds it, sets the close callback
// and closes it if it is over the limit; a first request may come earlier
// (OnRequest then attaches it). OnRegister runs from an event of the
// connection's own, so that a teardown before it runs can cancel it.
bufferevent* HttpDoor::Impl::OnAccept(event_base* base, void* arg) noexcept {
  auto* self = static_cast<Impl*>(arg);
  self->door_thread_.AssertOnOwner();
  bufferevent* bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
  if (bev == nullptr) return nullptr;  // evhttp makes its own; refused later
  bufferevent_incref(bev);
  ++self->open_connections_;
  auto connection = std::make_unique<Connection>(Connection{
      self, bev, self->open_connections_ > self->options_.max_connections});
  connection->header_timer =
      evtimer_new(base, &Impl::OnHeaderTimeout, connection.get());
  connection->registration =
      evtimer_new(base, &Impl::OnRegister, connection.get());
  const timeval now = {0, 0};
  if (connection->registration == nullptr ||
      evtimer_add(connection->registration, &now) != 0) {
    connection->registering = false;
    bufferevent_decref(bev);
  }
  self->connections_.emplace(bev, std::move(connection));
  return bev;
}

void HttpDoor::Impl::OnRegister(evutil_socket_t, short, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
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
  if (!connection->closed && connection->exchange == nullptr) {
    if (connection->over_limit) {
      // Runs OnClosed, which leaves the clean-up below to this function
      // while `registering` is set.
      evhttp_connection_free(connection->evcon);
    } else {
      self->ArmHeaderTimer(connection);
    }
  }
  connection->registering = false;
  if (connection->closed) {
    event_free(connection->header_timer);
    event_free(connection->registration);  // this one, which has run
    self->connections_.erase(bev);  // deletes `connection`
  }
  bufferevent_decref(bev);
}

void HttpDoor::Impl::Attach(Connection* connection, evhttp_connection* evcon) {
  connection->evcon = evcon;
  evhttp_connection_set_closecb(evcon, &Impl::OnClosed, connection);
}

void HttpDoor::Impl::MarkClosed(Connection* connection) {
  connection->closed = true;
  --open_connections_;
}

void HttpDoor::Impl::ArmHeaderTimer(Connection* connection) {
  const timeval tv = absl::ToTimeval(options_.header_timeout);
  evtimer_add(connection->header_timer, &tv);
}

void HttpDoor::Impl::OnHeaderTimeout(evutil_socket_t, short,
                                     void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  if (connection->closed || connection->exchange != nullptr ||
      connection->evcon == nullptr) {
    return;
  }
  evhttp_connection_free(connection->evcon);  // runs OnClosed
}

// evhttp is about to free the connection: the client closed it, the door
// closed it (over the limit, header timeout, a held read's client gone),
// or the door is being destroyed.
void HttpDoor::Impl::OnClosed(evhttp_connection*, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  if (connection->closed) return;
  if (Exchange* exchange = connection->exchange) {
    connection->exchange = nullptr;
    // evhttp frees the request with the connection.
    exchange->connection = nullptr;
    exchange->request = nullptr;
    if (exchange->state == Exchange::State::kReading) {
      // The engine's completion ends it (Deliver).
      self->admission_.engine().Cancel(exchange->read_id);
    } else {
      self->End(exchange);
    }
  }
  evtimer_del(connection->header_timer);
  self->MarkClosed(connection);
  if (!connection->registering) {
    event_free(connection->header_timer);
    if (connection->registration != nullptr) {
      event_free(connection->registration);  // not pending: it has run
    }
    self->connections_.erase(connection->bev);
  }
}

void HttpDoor::Impl::OnRequest(evhttp_request* request, void* arg) noexcept {
  auto* self = static_cast<Impl*>(arg);
  self->door_thread_.AssertOnOwner();
  evhttp_connection* evcon = evhttp_request_get_connection(request);
  auto found =
      self->connections_.find(evhttp_connection_get_bufferevent(evcon));
  if (found == self->connections_.end()) {
    // A connection whose bufferevent OnAccept could not make: untracked,
    // so it is not served.
    evhttp_add_header(evhttp_request_get_output_headers(request), "Connection",
                      "close");
    evhttp_send_error(request, 500, "untracked connection");
    return;
  }
  Connection* connection = found->second.get();
  if (connection->evcon == nullptr) self->Attach(connection, evcon);
  evtimer_del(connection->header_timer);
  self->Handle(connection, request);
}

void HttpDoor::Impl::Handle(Connection* connection, evhttp_request* request) {
  if (connection->over_limit) {
    HttpReply reply = ReplyForError(
        absl::ResourceExhaustedError(absl::StrCat(
            "too many connections (http_max_connections=",
            options_.max_connections, ")")),
        Stage::kAdmission);
    reply.close = true;
    Answer(connection, request, std::move(reply));
    return;
  }
  if (stopping_) {
    // The door is being destroyed: no read may start any more.
    Answer(connection, request,
           ReplyForError(absl::UnavailableError("tailgate is shutting down"),
                         Stage::kAdmission));
    return;
  }
  const HttpRequestIn in = RequestIn(request);
  if (in.method == HttpMethod::kOther) {
    admission_.CountRejection(RejectReason::kInvalidArgument);
    if (evhttp_request_get_command(request) == EVHTTP_REQ_CONNECT) {
      // evhttp keeps a CONNECT's connection open after its answer, and
      // sends that answer unframed (a tunnel would follow): write it here.
      AnswerRawAndClose(connection, MethodNotAllowed());
      return;
    }
    Answer(connection, request, MethodNotAllowed());
    return;
  }
  absl::StatusOr<DoorRead> read = ReadFromHttp(in);
  if (read.ok() && evbuffer_get_length(evhttp_request_get_input_buffer(
                       request)) > 0) {
    read = absl::InvalidArgumentError(
        "a request body is not accepted: GET and HEAD carry none");
  }
  if (!read.ok()) {
    admission_.CountRejection(RejectReason::kInvalidArgument);
    Answer(connection, request, ReplyForError(read.status(), Stage::kAdmission));
    return;
  }
  auto* exchange = new Exchange{connection, request};
  exchange->head = in.method == HttpMethod::kHead;
  connection->exchange = exchange;
  StartRead(exchange, *read);
}

void HttpDoor::Impl::StartRead(Exchange* exchange, const DoorRead& read) {
  const absl::Time call_deadline = read.timeout.has_value()
                                       ? absl::Now() + *read.timeout
                                       : absl::InfiniteFuture();
  absl::StatusOr<hedge::EngineRead> engine_read =
      admission_.Admit(read.request, call_deadline);
  if (!engine_read.ok()) {
    Send(exchange, ReplyForError(engine_read.status(), Stage::kAdmission));
    return;
  }
  exchange->holds_slot = true;
  exchange->state = Exchange::State::kReading;
  Hold(exchange);
  ++outstanding_;
  // This is the engine's loop thread: the read starts before the loop
  // sleeps again, and its callback runs here too, in a later step of the
  // loop (never inside Submit), and answers at once.
  absl::StatusOr<uint64_t> id = admission_.Submit(
      *std::move(engine_read),
      [this, exchange](absl::StatusOr<hedge::EngineResponse> result) {
        door_thread_.AssertOnOwner();
        --outstanding_;
        Deliver(exchange, std::move(result));
        if (stopping_ && outstanding_ == 0) FinishTeardown();
      });
  if (!id.ok()) {
    --outstanding_;
    Unhold(exchange);
    exchange->state = Exchange::State::kWriting;
    Send(exchange, ReplyForError(id.status(), Stage::kAdmission));
    return;
  }
  exchange->read_id = *id;
}

// While the engine has the read, the door takes the connection's
// bufferevent callbacks from evhttp and reads on: evhttp 2.1 stops reading
// once it has a request, so it would not notice the client closing until
// it wrote the answer. Bytes the client sends meanwhile (a pipelined
// request) wait in the input buffer for evhttp, up to kHeldInputBytes.
void HttpDoor::Impl::Hold(Exchange* exchange) {
  bufferevent* bev = exchange->connection->bev;
  bufferevent_getcb(bev, &exchange->evhttp_read, &exchange->evhttp_write,
                    &exchange->evhttp_event, &exchange->evhttp_arg);
  bufferevent_getwatermark(bev, EV_READ, &exchange->low_watermark,
                           &exchange->high_watermark);
  bufferevent_setcb(bev, nullptr, nullptr, &Impl::OnHeldEvent, exchange);
  bufferevent_setwatermark(bev, EV_READ, 0, kHeldInputBytes);
  bufferevent_enable(bev, EV_READ);
}

// Reading stays on: Send, which always follows, hands the answer to evhttp,
// which keeps reading on while it writes (to see the client close), so
// turning it off here would only cost an epoll_ctl per read.
void HttpDoor::Impl::Unhold(Exchange* exchange) {
  bufferevent* bev = exchange->connection->bev;
  bufferevent_setwatermark(bev, EV_READ, exchange->low_watermark,
                           exchange->high_watermark);
  bufferevent_setcb(bev, exchange->evhttp_read, exchange->evhttp_write,
                    exchange->evhttp_event, exchange->evhttp_arg);
}

void HttpDoor::Impl::OnHeldEvent(bufferevent* bev, short what,
                                 void* arg) noexcept {
  auto* exchange = static_cast<Exchange*>(arg);
  Impl* self = exchange->connection->door;
  self->door_thread_.AssertOnOwner();
  if ((what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) != 0) {
    // The client has gone: closing runs OnClosed, which cancels the read.
    evhttp_connection_free(exchange->connection->evcon);
    return;
  }
  if ((what & BEV_EVENT_TIMEOUT) != 0) {
    // evhttp's inactivity timeout paused reading; the read's own deadline
    // bounds how long it is held, so keep watching for a close.
    bufferevent_enable(bev, EV_READ);
  }
}

void HttpDoor::Impl::Deliver(Exchange* exchange,
                             absl::StatusOr<hedge::EngineResponse> result) {
  if (exchange->connection == nullptr) {  // the client has gone
    End(exchange);
    return;
  }
  Unhold(exchange);
  exchange->state = Exchange::State::kWriting;
  if (stopping_ && !result.ok() &&
      result.status().code() == absl::StatusCode::kCancelled) {
    // Cancelled by the destructor, not by the client.
    result = absl::UnavailableError("tailgate is shutting down");
  }
  if (result.ok()) {
    // The answer waits in evhttp's buffers until the client takes it, and
    // counts against --max_buffered_bytes until then (End releases it).
    const int64_t bytes = AnswerBytes(*result);
    if (admission_.HoldAnswer(bytes)) {
      exchange->held_bytes = bytes;
    } else {
      result = admission_.BufferFullError();
    }
  }
  HttpReply reply =
      result.ok()
          ? ReplyForResponse(*std::move(result), exchange->head)
          : ReplyForError(result.status(), Stage::kCompletion);
  Connection* connection = exchange->connection;
  Send(exchange, std::move(reply));
  WriteNow(connection);
}

// evhttp hands an answer to the connection's bufferevent, which writes it
// once epoll says the socket is writable: two epoll_ctl (watch for
// writable, stop) and a loop turn per answer, on a socket that almost
// always has room. Instead the answer is written here at once; if it all
// went, the write watch is dropped before epoll ever sees it (the base's
// change list) and evhttp's own write-done callback runs, exactly as the
// bufferevent would run it. Only from Deliver: outside evhttp's callbacks,
// since evhttp may free the request and the connection in that callback
// (it reads a pipelined request only on a later loop turn).
void HttpDoor::Impl::WriteNow(Connection* connection) {
  bufferevent* bev = connection->bev;
  evbuffer* output = bufferevent_get_output(bev);
  if (evbuffer_write(output, bufferevent_getfd(bev)) < 0 ||
      evbuffer_get_length(output) != 0) {
    return;  // the bufferevent finishes the write, or reports the error
  }
  bufferevent_disable(bev, EV_WRITE);
  bufferevent_data_cb read, write;
  bufferevent_event_cb event;
  void* arg = nullptr;
  bufferevent_getcb(bev, &read, &write, &event, &arg);
  // Runs OnReplyComplete, then evhttp frees the request and either closes
  // the connection or waits for its next request.
  if (write != nullptr) write(bev, arg);
}

void HttpDoor::Impl::Answer(Connection* connection, evhttp_request* request,
                            HttpReply reply) {
  auto* exchange = new Exchange{connection, request};
  exchange->head = evhttp_request_get_command(request) == EVHTTP_REQ_HEAD;
  connection->exchange = exchange;
  Send(exchange, std::move(reply));
}

void HttpDoor::Impl::AnswerRawAndClose(Connection* connection,
                                       const HttpReply& reply) {
  std::string bytes = absl::StrCat("HTTP/1.1 ", reply.status, " ",
                                   reply.status == 405 ? "Method Not Allowed"
                                                       : "Error",
                                   "\r\n");
  for (const hygiene::HttpHeader& header : reply.headers) {
    absl::StrAppend(&bytes, header.name, ": ", header.value, "\r\n");
  }
  absl::StrAppend(&bytes, "Content-Length: ", reply.body.size(),
                  "\r\nConnection: close\r\n\r\n", reply.body);
  bufferevent* bev = connection->bev;
  bufferevent_disable(bev, EV_READ);
  bufferevent_setcb(bev, nullptr, &Impl::OnRawWritten, &Impl::OnRawEvent,
                    connection);
  bufferevent_write(bev, bytes.data(), bytes.size());
  bufferevent_enable(bev, EV_WRITE);
}

// The raw answer is out (or the client has gone, or stopped reading until
// the inactivity timeout): close. The request is freed with the connection.
void HttpDoor::Impl::OnRawWritten(bufferevent*, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  connection->door->door_thread_.AssertOnOwner();
  evhttp_connection_free(connection->evcon);  // runs OnClosed
}

void HttpDoor::Impl::OnRawEvent(bufferevent*, short, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  connection->door->door_thread_.AssertOnOwner();
  evhttp_connection_free(connection->evcon);  // runs OnClosed
}

void HttpDoor::Impl::Send(Exchange* exchange, HttpReply reply) {
  evhttp_request* request = exchange->request;
  evkeyvalq* headers = evhttp_request_get_output_headers(request);
  for (const hygiene::HttpHeader& header : reply.headers) {
    // evhttp refuses a value with CR or LF; a replica's headers have none.
    evhttp_add_header(headers, header.name.c_str(), header.value.c_str());
  }
  if (reply.close || admission_.gate().draining()) {
    evhttp_add_header(headers, "Connection", "close");
  }
  evbuffer* body = evbuffer_new();
  if (exchange->head) {
    // evhttp would send a body even to HEAD: keep only its length.
    if (evhttp_find_header(headers, "Content-Length") == nullptr) {
      evhttp_add_header(headers, "Content-Length",
                        absl::StrCat(reply.body.size()).c_str());
    }
  } else if (!reply.body.empty()) {
    auto* owned = new std::string(std::move(reply.body));
    evbuffer_add_reference(body, owned->data(), owned->size(), &FreeBody,
                           owned);
  }
  exchange->state = Exchange::State::kWriting;
  evhttp_request_set_on_complete_cb(request, &Impl::OnReplyComplete, exchange);
  evhttp_send_reply(request, reply.status, nullptr, body);
  evbuffer_free(body);
}

// evhttp has written the whole answer; it frees the request next, then
// closes the connection or waits for its next request.
void HttpDoor::Impl::OnReplyComplete(evhttp_request*, void* arg) noexcept {
  auto* exchange = static_cast<Exchange*>(arg);
  Connection* connection = exchange->connection;
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  connection->exchange = nullptr;
  self->End(exchange);
  self->ArmHeaderTimer(connection);
}

void HttpDoor::Impl::End(Exchange* exchange) {
  if (exchange->holds_slot) admission_.Release(exchange->held_bytes);
  delete exchange;
}

absl::StatusOr<std::unique_ptr<HttpDoor>> HttpDoor::Start(
    const HttpDoorOptions& options, ReadAdmission& admission) {
  auto impl = std::make_unique<Impl>(options, admission);
  Impl* door = impl.get();
  absl::Status bound =
      impl->OnLoop([door](event_base* base) { return door->Bind(base); });
  if (!bound.ok()) return bound;
  return std::unique_ptr<HttpDoor>(new HttpDoor(std::move(impl)));
}

HttpDoor::HttpDoor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpDoor::~HttpDoor() = default;

const ListenAddress& HttpDoor::address() const { return impl_->address(); }

}  // namespace tailgate::server::http_door
