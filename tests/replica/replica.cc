#include "tests/replica/replica.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <sys/socket.h>

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "hedge/sync/mutex.h"
#include "tests/replica/event_loop_thread.h"
#include "tests/replica/loopback.h"

namespace tailgate::testing {

Handler Always(ReplicaResponse response) {
  return [response = std::move(response)](const ReplicaRequest&) {
    return response;
  };
}

namespace {

using Fault = ReplicaResponse::Fault;

constexpr char kHugeContentLength[] = "1000000000000";

const char* MethodName(evhttp_cmd_type type) {
  switch (type) {
    case EVHTTP_REQ_GET:
      return "GET";
    case EVHTTP_REQ_POST:
      return "POST";
    case EVHTTP_REQ_HEAD:
      return "HEAD";
    case EVHTTP_REQ_PUT:
      return "PUT";
    case EVHTTP_REQ_DELETE:
      return "DELETE";
    case EVHTTP_REQ_OPTIONS:
      return "OPTIONS";
    case EVHTTP_REQ_TRACE:
      return "TRACE";
    case EVHTTP_REQ_CONNECT:
      return "CONNECT";
    case EVHTTP_REQ_PATCH:
      return "PATCH";
  }
  return "UNKNOWN";
}

// Content-Length and Transfer-Encoding: the replica writes these itself
// whenever a fault decides how the body is framed.
bool IsFramingHeader(absl::string_view name) {
  return absl::EqualsIgnoreCase(name, "Content-Length") ||
         absl::EqualsIgnoreCase(name, "Transfer-Encoding");
}

bool HasHeader(const HeaderList& headers, absl::string_view name) {
  return std::any_of(headers.begin(), headers.end(), [&](const auto& header) {
    return absl::EqualsIgnoreCase(header.first, name);
  });
}

// The status line and headers of a fault written byte by byte, without the
// blank line that ends them.
std::string RawHead(const ReplicaResponse& response,
                    absl::string_view content_length) {
  std::string head = absl::StrCat("HTTP/1.1 ", response.status, " Fault\r\n");
  for (const auto& [name, value] : response.headers) {
    if (!IsFramingHeader(name))
      absl::StrAppend(&head, name, ": ", value, "\r\n");
  }
  absl::StrAppend(&head, "Content-Length: ", content_length, "\r\n");
  return head;
}

// The bytes a raw fault writes before the replica closes the connection.
std::string RawBytes(const ReplicaResponse& response, bool head_request) {
  switch (response.fault) {
    case Fault::kMalformedStatus:
      return "HTTP/1.1 abc\r\n\r\n";
    case Fault::kMalformedHeaders:
      return absl::StrCat(RawHead(response, absl::StrCat(response.body.size())),
                          "this header line has no colon\r\n\r\n",
                          head_request ? "" : response.body);
    case Fault::kCloseMidBody: {
      const size_t declared = std::max<size_t>(response.body.size(), 1);
      return absl::StrCat(
          RawHead(response, absl::StrCat(declared)), "\r\n",
          head_request ? "" : response.body.substr(0, declared / 2));
    }
    default:
      return "";
  }
}

void SetOutputHeaders(evhttp_request* request, const HeaderList& headers,
                      bool keep_framing) {
  evkeyvalq* output = evhttp_request_get_output_headers(request);
  for (const auto& [name, value] : headers) {
    if (keep_framing || !IsFramingHeader(name)) {
      evhttp_add_header(output, name.c_str(), value.c_str());
    }
  }
}

void SendChunk(evhttp_request* request, absl::string_view bytes) {
  evbuffer* chunk = evbuffer_new();
  evbuffer_add(chunk, bytes.data(), bytes.size());
  evhttp_send_reply_chunk(request, chunk);
  evbuffer_free(chunk);
}

// Aborts a TCP connection with a bare RST. evhttp_connection_free calls
// shutdown(SHUT_WR) before it closes, which would put a FIN on the wire
// first even with SO_LINGER 0; connect(AF_UNSPEC) disconnects the socket at
// once (Linux tcp_disconnect: an RST for an established connection) and
// leaves the descriptor valid for evhttp to close.
void ResetConnection(evutil_socket_t fd) {
  sockaddr unspecified = {};
  unspecified.sa_family = AF_UNSPEC;
  connect(fd, &unspecified, sizeof(unspecified));
}

}  // namespace

class Replica::Impl {
 public:
  Impl(std::unique_ptr<EventLoopThread> loop, evhttp* http,
       const ReplicaOptions& options, Handler handler)
      : loop_(std::move(loop)),
        http_(http),
        options_(options),
        handler_(std::move(handler)) {}
  ~Impl();

  // Binds 127.0.0.1:options_.port and hooks evhttp up. Before Start only.
  absl::Status Listen();
  void Start() { loop_->Start(); }

  int port() const { return port_; }
  const std::string& address() const { return options_.address; }

  void SetHandler(Handler handler) {
    hedge::MutexLock lock(&mu_);
    handler_ = std::move(handler);
  }
  std::vector<ReplicaRequest> requests() const {
    hedge::MutexLock lock(&mu_);
    return requests_;
  }
  int64_t requests_received() const {
    hedge::MutexLock lock(&mu_);
    return requests_received_;
  }
  int64_t connections_accepted() const {
    hedge::MutexLock lock(&mu_);
    return connections_accepted_;
  }
  int64_t open_connections() const {
    hedge::MutexLock lock(&mu_);
    return open_connections_;
  }
  int64_t client_disconnects_before_response() const {
    hedge::MutexLock lock(&mu_);
    return disconnects_before_response_;
  }

  bool WaitForRequests(int64_t n, absl::Duration timeout) const {
    return Await(timeout, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return requests_received_ >= n;
    });
  }
  bool WaitForDisconnectsBeforeResponse(int64_t n,
                                        absl::Duration timeout) const {
    return Await(timeout, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return disconnects_before_response_ >= n;
    });
  }
  bool WaitForOpenConnections(int64_t n, absl::Duration timeout) const {
    return Await(timeout, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return open_connections_ == n;
    });
  }

 private:
  struct Reply;

  // One accepted TCP connection. evhttp owns the evhttp_connection and its
  // bufferevent; this tracks it from accept to close.
  struct Connection {
    Impl* replica;
    uint64_t id;
    // Created in OnAccept. The replica holds a reference on it until
    // OnRegister has run, so the pointer stays valid (and unique as a map
    // key) even if evhttp frees the connection first.
    bufferevent* bev;
    evhttp_connection* evcon = nullptr;  // once attached
    bool registering = true;             // OnRegister has not run yet
    bool closed = false;
    Reply* reply = nullptr;  // the request being answered late, if any
  };

  // A request whose answer is delayed, faulty or streamed.
  struct Reply {
    enum class Phase {
      kHeld,       // the replica holds the connection: delay, kHang
      kStreaming,  // evhttp writes the answer: drip, stall, endless body
      kRaw,        // the replica writes raw bytes, then closes
    };

    Connection* connection;
    evhttp_request* request;
    ReplicaResponse response;
    bool head_request;
    event* timer = nullptr;  // the delay, then drip / chunk ticks
    Phase phase = Phase::kHeld;
    size_t body_sent = 0;
    // evhttp's bufferevent callbacks, put back when it resumes writing.
    bufferevent_data_cb evhttp_read = nullptr;
    bufferevent_data_cb evhttp_write = nullptr;
    bufferevent_event_cb evhttp_event = nullptr;
    void* evhttp_arg = nullptr;
  };

  // Waits on changed_ until `predicate` (called with mu_ held) holds or
  // `timeout` passes; returns the predicate's last value.
  template <typename Predicate>
  bool Await(absl::Duration timeout, Predicate predicate) const
      ABSL_LOCKS_EXCLUDED(mu_) {
    const absl::Time deadline = absl::Now() + timeout;
    hedge::MutexLock lock(&mu_);
    bool timed_out = false;
    while (!predicate() && !timed_out) {
      timed_out = changed_.WaitWithDeadline(&mu_, deadline);
    }
    return predicate();
  }

  // libevent callbacks (loop thread).
  static bufferevent* OnAccept(event_base* base, void* arg) noexcept;
  static void OnRegister(evutil_socket_t, short, void* arg) noexcept;
  static void OnClosed(evhttp_connection* evcon, void* arg) noexcept;
  static void OnRequest(evhttp_request* request, void* arg) noexcept;
  static void OnTimer(evutil_socket_t, short, void* arg) noexcept;
  static void OnHeldEvent(bufferevent* bev, short what, void* arg) noexcept;
  static void OnRawWritten(bufferevent* bev, void* arg) noexcept;

  // Loop thread only (or after the loop has stopped).
  void AssertOnLoop() const { assert(stopping_ || loop_->InLoopThread()); }
  void Attach(Connection* connection, evhttp_connection* evcon);
  void MarkClosed(Connection* connection);
  void Forget(Connection* connection);
  ReplicaRequest Record(evhttp_request* request, uint64_t connection_id);
  void Hold(Reply* reply);
  void Unhold(Reply* reply);
  void Begin(Reply* reply);
  void StartStreaming(Reply* reply);
  void Tick(Reply* reply);
  void Arm(Reply* reply, absl::Duration after);
  // Detaches `reply` from its connection and frees it; returns its request,
  // which the caller must hand back to evhttp.
  evhttp_request* Finish(Reply* reply);
  // Closes the connection from the replica's side (FIN, or RST if `reset`),
  // dropping any reply on it.
  void Close(Connection* connection, bool reset);
  void CountDisconnectBeforeResponse();
  void SendComplete(evhttp_request* request, const ReplicaResponse& response,
                    bool head_request);

  // Constant after Listen.
  const std::unique_ptr<EventLoopThread> loop_;
  evhttp* const http_;
  const ReplicaOptions options_;
  int port_ = 0;

  // Loop thread only.
  absl::flat_hash_map<bufferevent*, std::unique_ptr<Connection>> connections_;
  uint64_t next_connection_id_ = 0;
  bool stopping_ = false;  // set once the loop has stopped, for teardown

  // changed_ is signalled on every change to the counters below.
  // (hedge::Mutex rather than absl::Mutex: see hedge/sync/mutex.h.)
  mutable hedge::Mutex mu_;
  mutable hedge::CondVar changed_;
  Handler handler_ ABSL_GUARDED_BY(mu_);
  // If options_.record_requests.
  std::vector<ReplicaRequest> requests_ ABSL_GUARDED_BY(mu_);
  int64_t requests_received_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t connections_accepted_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t open_connections_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t disconnects_before_response_ ABSL_GUARDED_BY(mu_) = 0;
};

absl::Status Replica::Impl::Listen() {
  absl::StatusOr<evconnlistener*> listener =
      ListenOnLoopback(loop_->base(), options_.port, nullptr, nullptr,
                       options_.address.c_str());
  if (!listener.ok()) return listener.status();
  if (evhttp_bind_listener(http_, *listener) == nullptr) {
    evconnlistener_free(*listener);
    return absl::InternalError("evhttp_bind_listener failed");
  }
  absl::StatusOr<int> bound = LocalPort(evconnlistener_get_fd(*listener));
  if (!bound.ok()) return bound.status();
  port_ = *bound;

  evhttp_set_default_content_type(http_, nullptr);
  evhttp_set_allowed_methods(
      http_, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                 EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
                 EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
  evhttp_set_gencb(http_, &Impl::OnRequest, this);
  evhttp_set_bevcb(http_, &Impl::OnAccept, this);
  return absl::OkStatus();
}

Replica::Impl::~Impl() {
  loop_->Stop();
  // The loop thread has been joined: from here on this thread owns
  // everything that was loop-thread-only.
  stopping_ = true;
  evhttp_free(http_);  // closes every connection; OnClosed drops replies
  for (auto& [bev, connection] : connections_) {
    if (connection->registering) bufferevent_decref(bev);  // OnRegister's
  }
  connections_.clear();
}

// evhttp asks for a bufferevent for each accepted connection: this is the
// one hook it offers at accept time. The evhttp_connection does not exist
// yet, so OnRegister, on the next loop iteration, finds it and sets the
// close callback; a first request may do that earlier (OnRequest).
bufferevent* Replica::Impl::OnAccept(event_base* base, void* arg) noexcept {
  auto* self = static_cast<Impl*>(arg);
  bufferevent* bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
  if (bev == nullptr) return nullptr;  // evhttp makes its own; untracked
  bufferevent_incref(bev);
  auto connection = std::make_unique<Connection>(
      Connection{self, self->next_connection_id_++, bev});
  const timeval now = {0, 0};
  if (event_base_once(base, -1, EV_TIMEOUT, &Impl::OnRegister, connection.get(),
                      &now) != 0) {
    // Without OnRegister a connection that closes before its first request
    // is never seen closing; that is all that is lost.
    connection->registering = false;
    bufferevent_decref(bev);
  }
  self->connections_.emplace(bev, std::move(connection));
  {
    hedge::MutexLock lock(&self->mu_);
    ++self->connections_accepted_;
    ++self->open_connections_;
  }
  self->changed_.SignalAll();
  return bev;
}

void Replica::Impl::OnRegister(evutil_socket_t, short, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  Impl* self = connection->replica;
  self->AssertOnLoop();
  connection->registering = false;
  if (connection->evcon == nullptr && !connection->closed) {
    // evhttp passes its evhttp_connection as the bufferevent's callback
    // argument (libevent 2.1, http.c); bufferevent_free clears it, so null
    // means evhttp already closed the connection.
    bufferevent_data_cb read, write;
    bufferevent_event_cb event;
    void* evcon = nullptr;
    bufferevent_getcb(connection->bev, &read, &write, &event, &evcon);
    if (evcon == nullptr) {
      self->MarkClosed(connection);
    } else {
      self->Attach(connection, static_cast<evhttp_connection*>(evcon));
    }
  }
  bufferevent* bev = connection->bev;
  if (connection->closed) self->Forget(connection);
  bufferevent_decref(bev);
}

void Replica::Impl::Attach(Connection* connection, evhttp_connection* evcon) {
  connection->evcon = evcon;
  evhttp_connection_set_closecb(evcon, &Impl::OnClosed, connection);
}

void Replica::Impl::MarkClosed(Connection* connection) {
  connection->closed = true;
  {
    hedge::MutexLock lock(&mu_);
    --open_connections_;
  }
  changed_.SignalAll();
}

void Replica::Impl::Forget(Connection* connection) {
  connections_.erase(connection->bev);
}

// evhttp is about to free the connection: the client closed it (between
// requests, or while evhttp was streaming an answer), the replica closed
// it, or the replica is being destroyed.
void Replica::Impl::OnClosed(evhttp_connection*, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  Impl* self = connection->replica;
  self->AssertOnLoop();
  if (connection->closed) return;
  if (Reply* reply = connection->reply) {
    if (!self->stopping_) self->CountDisconnectBeforeResponse();
    evhttp_request* request = self->Finish(reply);
    // On a client close evhttp detaches an unfinished request from the
    // connection and leaves it to its owner; otherwise it frees it with
    // the connection.
    if (evhttp_request_get_connection(request) == nullptr) {
      evhttp_request_free(request);
    }
  }
  self->MarkClosed(connection);
  if (!connection->registering) self->Forget(connection);
}

ReplicaRequest Replica::Impl::Record(evhttp_request* request,
                                     uint64_t connection_id) {
  ReplicaRequest recorded;
  recorded.connection = connection_id;
  recorded.method = MethodName(evhttp_request_get_command(request));
  recorded.uri = evhttp_request_get_uri(request);
  const evkeyvalq* headers = evhttp_request_get_input_headers(request);
  for (const evkeyval* header = headers->tqh_first; header != nullptr;
       header = header->next.tqe_next) {
    recorded.headers.emplace_back(header->key, header->value);
  }
  {
    hedge::MutexLock lock(&mu_);
    recorded.id = requests_received_++;
    if (options_.record_requests) requests_.push_back(recorded);
  }
  changed_.SignalAll();
  return recorded;
}

void Replica::Impl::OnRequest(evhttp_request* request, void* arg) noexcept {
  auto* self = static_cast<Impl*>(arg);
  self->AssertOnLoop();
  evhttp_connection* evcon = evhttp_request_get_connection(request);
  auto found =
      self->connections_.find(evhttp_connection_get_bufferevent(evcon));
  if (found == self->connections_.end()) {
    evhttp_send_error(request, 500, "replica: untracked connection");
    return;
  }
  Connection* connection = found->second.get();
  if (connection->evcon == nullptr) self->Attach(connection, evcon);

  const ReplicaRequest recorded = self->Record(request, connection->id);
  Handler handler;
  {
    hedge::MutexLock lock(&self->mu_);
    handler = self->handler_;
  }
  ReplicaResponse response;
  if (handler) {
    response = handler(recorded);
  } else {
    response.status = 500;
    response.body = "replica: no handler";
  }
  const bool head_request =
      evhttp_request_get_command(request) == EVHTTP_REQ_HEAD;
  if (response.fault == Fault::kNone &&
      response.delay <= absl::ZeroDuration()) {
    self->SendComplete(request, response, head_request);
    return;
  }
  auto* reply =
      new Reply{connection, request, std::move(response), head_request};
  connection->reply = reply;
  reply->timer = evtimer_new(self->loop_->base(), &Impl::OnTimer, reply);
  self->Hold(reply);
  // Even with no delay the fault starts from the timer, outside evhttp's
  // request callback, since it may close the connection.
  self->Arm(reply, reply->response.delay);
}

void Replica::Impl::SendComplete(evhttp_request* request,
                                 const ReplicaResponse& response,
                                 bool head_request) {
  SetOutputHeaders(request, response.headers, /*keep_framing=*/true);
  if (head_request && !HasHeader(response.headers, "Content-Length")) {
    // evhttp adds Content-Length only when it sends a body.
    evhttp_add_header(evhttp_request_get_output_headers(request),
                      "Content-Length",
                      absl::StrCat(response.body.size()).c_str());
  }
  evbuffer* body = evbuffer_new();
  evbuffer_add(body, response.body.data(), response.body.size());
  evhttp_send_reply(request, response.status, nullptr, body);
  evbuffer_free(body);
}

// While a reply waits, the replica takes the connection's bufferevent
// callbacks from evhttp and reads on: evhttp 2.1 stops reading once it has
// a request, so it would not notice the client closing until it wrote the
// answer. Bytes the client sends meanwhile (a pipelined request) wait in
// the input buffer for evhttp.
void Replica::Impl::Hold(Reply* reply) {
  bufferevent* bev = reply->connection->bev;
  bufferevent_getcb(bev, &reply->evhttp_read, &reply->evhttp_write,
                    &reply->evhttp_event, &reply->evhttp_arg);
  bufferevent_setcb(bev, nullptr, &Impl::OnRawWritten, &Impl::OnHeldEvent,
                    reply);
  bufferevent_enable(bev, EV_READ);
}

void Replica::Impl::Unhold(Reply* reply) {
  bufferevent_setcb(reply->connection->bev, reply->evhttp_read,
                    reply->evhttp_write, reply->evhttp_event,
                    reply->evhttp_arg);
}

void Replica::Impl::Arm(Reply* reply, absl::Duration after) {
  const timeval tv = absl::ToTimeval(std::max(after, absl::ZeroDuration()));
  evtimer_add(reply->timer, &tv);
}

void Replica::Impl::OnTimer(evutil_socket_t, short, void* arg) noexcept {
  auto* reply = static_cast<Reply*>(arg);
  Impl* self = reply->connection->replica;
  self->AssertOnLoop();
  if (reply->phase == Reply::Phase::kHeld) {
    self->Begin(reply);
  } else {
    self->Tick(reply);
  }
}

// The delay is over: act out the fault.
void Replica::Impl::Begin(Reply* reply) {
  switch (reply->response.fault) {
    case Fault::kNone: {
      Unhold(reply);
      const ReplicaResponse response = std::move(reply->response);
      const bool head_request = reply->head_request;
      SendComplete(Finish(reply), response, head_request);
      return;
    }
    case Fault::kHang:
      return;  // until the client closes (OnHeldEvent)
    case Fault::kDrip:
    case Fault::kStallAfterStatus:
    case Fault::kHugeContentLength:
    case Fault::kEndlessChunked:
      Unhold(reply);
      StartStreaming(reply);
      return;
    case Fault::kCloseMidBody:
    case Fault::kMalformedStatus:
    case Fault::kMalformedHeaders: {
      reply->phase = Reply::Phase::kRaw;
      const std::string bytes = RawBytes(reply->response, reply->head_request);
      bufferevent* bev = reply->connection->bev;
      bufferevent_write(bev, bytes.data(), bytes.size());
      bufferevent_enable(bev, EV_WRITE);
      return;  // closes once written (OnRawWritten)
    }
    case Fault::kResetAtOnce:
      Close(reply->connection, /*reset=*/true);
      return;
  }
}

void Replica::Impl::StartStreaming(Reply* reply) {
  reply->phase = Reply::Phase::kStreaming;
  const ReplicaResponse& response = reply->response;
  evhttp_request* request = reply->request;
  SetOutputHeaders(request, response.headers, /*keep_framing=*/false);
  evkeyvalq* headers = evhttp_request_get_output_headers(request);
  switch (response.fault) {
    case Fault::kDrip:
      evhttp_add_header(headers, "Content-Length",
                        absl::StrCat(response.body.size()).c_str());
      break;
    case Fault::kStallAfterStatus:
      evhttp_add_header(
          headers, "Content-Length",
          absl::StrCat(std::max<size_t>(response.body.size(), 1)).c_str());
      break;
    case Fault::kHugeContentLength:
      evhttp_add_header(headers, "Content-Length", kHugeContentLength);
      break;
    default:  // kEndlessChunked: no length, so evhttp chunks
      break;
  }
  evhttp_send_reply_start(request, response.status, nullptr);
  const bool done_at_once =
      reply->head_request ||
      (response.fault == Fault::kDrip && response.body.empty());
  if (done_at_once) {
    evhttp_send_reply_end(Finish(reply));
    return;
  }
  switch (response.fault) {
    case Fault::kDrip:
    case Fault::kEndlessChunked:
      Arm(reply, response.drip_interval);
      break;
    case Fault::kHugeContentLength:
      if (!response.body.empty()) SendChunk(request, response.body);
      break;
    default:  // kStallAfterStatus
      break;
  }
}

void Replica::Impl::Tick(Reply* reply) {
  const ReplicaResponse& response = reply->response;
  const size_t step = std::max<size_t>(response.drip_bytes, 1);
  if (response.fault == Fault::kEndlessChunked) {
    const absl::string_view source =
        response.body.empty() ? absl::string_view("x") : response.body;
    std::string chunk;
    chunk.reserve(step);
    while (chunk.size() < step) {
      chunk.push_back(source[reply->body_sent++ % source.size()]);
    }
    SendChunk(reply->request, chunk);
    Arm(reply, response.drip_interval);
    return;
  }
  const absl::string_view rest =
      absl::string_view(response.body).substr(reply->body_sent);
  SendChunk(reply->request, rest.substr(0, step));
  reply->body_sent += std::min(step, rest.size());
  if (reply->body_sent < response.body.size()) {
    Arm(reply, response.drip_interval);
  } else {
    evhttp_send_reply_end(Finish(reply));
  }
}

evhttp_request* Replica::Impl::Finish(Reply* reply) {
  evhttp_request* request = reply->request;
  reply->connection->reply = nullptr;
  if (reply->timer != nullptr) event_free(reply->timer);
  delete reply;
  return request;
}

void Replica::Impl::Close(Connection* connection, bool reset) {
  // The request stays on the connection; evhttp frees it with it.
  if (connection->reply != nullptr) Finish(connection->reply);
  if (reset) ResetConnection(bufferevent_getfd(connection->bev));
  evhttp_connection_free(connection->evcon);  // runs OnClosed
}

void Replica::Impl::OnHeldEvent(bufferevent*, short what, void* arg) noexcept {
  auto* reply = static_cast<Reply*>(arg);
  Impl* self = reply->connection->replica;
  self->AssertOnLoop();
  if ((what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) == 0) return;
  self->CountDisconnectBeforeResponse();
  self->Close(reply->connection, /*reset=*/false);
}

void Replica::Impl::OnRawWritten(bufferevent*, void* arg) noexcept {
  auto* reply = static_cast<Reply*>(arg);
  Impl* self = reply->connection->replica;
  self->AssertOnLoop();
  if (reply->phase == Reply::Phase::kRaw) {
    self->Close(reply->connection, /*reset=*/false);
  }
}

void Replica::Impl::CountDisconnectBeforeResponse() {
  {
    hedge::MutexLock lock(&mu_);
    ++disconnects_before_response_;
  }
  changed_.SignalAll();
}

absl::StatusOr<std::unique_ptr<Replica>> Replica::Start(
    Handler handler, const ReplicaOptions& options) {
  absl::StatusOr<std::unique_ptr<EventLoopThread>> loop =
      EventLoopThread::Create();
  if (!loop.ok()) return loop.status();
  evhttp* http = evhttp_new((*loop)->base());
  if (http == nullptr) return absl::InternalError("evhttp_new failed");
  auto impl = std::make_unique<Impl>(*std::move(loop), http, options,
                                     std::move(handler));
  if (absl::Status listening = impl->Listen(); !listening.ok()) {
    return listening;
  }
  impl->Start();
  return std::unique_ptr<Replica>(new Replica(std::move(impl)));
}

Replica::Replica(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Replica::~Replica() = default;

int Replica::port() const { return impl_->port(); }
std::string Replica::url() const {
  return absl::StrCat("http://", impl_->address(), ":", impl_->port());
}
void Replica::SetHandler(Handler handler) {
  impl_->SetHandler(std::move(handler));
}
std::vector<ReplicaRequest> Replica::requests() const {
  return impl_->requests();
}
int64_t Replica::requests_received() const {
  return impl_->requests_received();
}
int64_t Replica::connections_accepted() const {
  return impl_->connections_accepted();
}
int64_t Replica::open_connections() const { return impl_->open_connections(); }
int64_t Replica::client_disconnects_before_response() const {
  return impl_->client_disconnects_before_response();
}
bool Replica::WaitForRequests(int64_t n, absl::Duration timeout) const {
  return impl_->WaitForRequests(n, timeout);
}
bool Replica::WaitForDisconnectsBeforeResponse(int64_t n,
                                               absl::Duration timeout) const {
  return impl_->WaitForDisconnectsBeforeResponse(n, timeout);
}
bool Replica::WaitForOpenConnections(int64_t n, absl::Duration timeout) const {
  return impl_->WaitForOpenConnections(n, timeout);
}

}  // namespace tailgate::testing
