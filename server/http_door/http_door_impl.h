// HttpDoor::Impl: the HTTP door's state and its libevent callbacks.
// Internal to the HTTP door: callers use http_door.h.
//
// One request is one Exchange on one Connection: evhttp reads the request,
// the door refuses it or admits it as an engine read, holds the connection
// while the engine has the read (watching for the client to close, which
// cancels it), then writes the answer and waits for the connection's next
// request. The pieces, by file:
//   - http_door.cc: Start, binding evhttp on the loop, and the teardown
//     the destructor runs there (cancel the reads in flight, then free
//     evhttp and every connection once the engine has completed them);
//   - http_door_connections.cc: accept, the connection limit, the header
//     timeout between requests (keep-alive), the watch for NUL bytes in
//     what a client sends, close;
//   - http_door_requests.cc: a request's refusals before any read is
//     submitted (over the limit, shutting down, method, a NUL byte the
//     connection sent, the mapping's checks, a body);
//   - http_door_reads.cc: admission and submission of the read, the held
//     connection, the delivery of the result;
//   - http_door_answers.cc: writing answers (through evhttp, or raw for
//     CONNECT), the write done at once after a read, the end of an
//     exchange.
//
// Thread ownership: everything below runs on the engine's loop thread
// (door_thread_, bound by Bind), and every libevent callback asserts it;
// no lock, no hand-over. The exceptions: the constructor, Start and the
// destructor run on the thread that starts and destroys the door (main),
// which waits for each step it posts to the loop; if the loop is not
// running, the destructor's thread takes door_thread_ over and tears down
// itself. torn_down_ is the one state shared between the two threads.

#ifndef TAILGATE_SERVER_HTTP_DOOR_HTTP_DOOR_IMPL_H_
#define TAILGATE_SERVER_HTTP_DOOR_HTTP_DOOR_IMPL_H_

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include <cstdint>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hedge/sync/thread_checker.h"
#include "server/http_door/http_door.h"
#include "server/http_door/http_mapping.h"
#include "server/net/accept_backoff.h"
#include "server/net/listen_address.h"
#include "server/net/loop_guest.h"
#include "server/read/read_call.h"

namespace tailgate::server::http_door {

class HttpDoor::Impl {
 public:
  Impl(const HttpDoorOptions& options, ReadCore& core, hedge::EventLoop& loop)
      : options_(options), core_(core), loop_(loop) {}
  ~Impl();

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
    bool over_limit;                     // accepted beyond max_connections
    evhttp_connection* evcon = nullptr;  // once attached
    bool registering = true;             // OnRegister has not run yet
    bool closed = false;
    // The header deadline while waiting for a request, the send deadline
    // while an answer is written; not armed while a read is in flight.
    event* deadline = nullptr;
    uint64_t waiting_since = 0;  // idle_order_ when it last began to wait
    Exchange* exchange = nullptr;   // the request being answered, if any
    event* registration = nullptr;  // runs OnRegister once, after accept
    // OnInput on the bufferevent's input, from accept until MarkClosed.
    evbuffer_cb_entry* input_watch = nullptr;
    // OK until OnInput sees a NUL byte; then the refusal every request
    // read from the connection gets.
    absl::Status input_refusal;
  };

  // One request being answered. Door thread only.
  struct Exchange {
    enum class State {
      kReading,  // the engine has the read; the connection is held
      kWriting,  // the answer is handed to evhttp
    };
    Exchange(Connection* connection, evhttp_request* request, ReadCore& core)
        : connection(connection), request(request), read(core) {}

    Connection* connection;   // null once the connection is gone
    evhttp_request* request;  // null once the connection is gone
    bool head = false;
    State state = State::kWriting;
    // The read, from admission to delivery; finished when the exchange
    // ends (End).
    ReadCall read;
    // evhttp's bufferevent callbacks and read watermarks while held.
    bufferevent_data_cb evhttp_read = nullptr;
    bufferevent_data_cb evhttp_write = nullptr;
    bufferevent_event_cb evhttp_event = nullptr;
    void* evhttp_arg = nullptr;
    size_t low_watermark = 0;
    size_t high_watermark = 0;
  };

  // libevent callbacks (door thread), by the file that defines them.
  // Connections (http_door_connections.cc).
  static bufferevent* OnAccept(event_base* base, void* arg) noexcept;
  static void OnRegister(evutil_socket_t, short, void* arg) noexcept;
  static void OnClosed(evhttp_connection* evcon, void* arg) noexcept;
  static void OnDeadline(evutil_socket_t, short, void* arg) noexcept;
  static void OnInput(evbuffer* input, const evbuffer_cb_info* info,
                      void* arg) noexcept;
  // Requests (http_door_requests.cc).
  static void OnRequest(evhttp_request* request, void* arg) noexcept;
  // Reads (http_door_reads.cc).
  static void OnHeldEvent(bufferevent* bev, short what, void* arg) noexcept;
  // Answers (http_door_answers.cc).
  static void OnReplyComplete(evhttp_request* request, void* arg) noexcept;
  static void OnRawWritten(bufferevent* bev, void* arg) noexcept;
  static void OnRawEvent(bufferevent* bev, short what, void* arg) noexcept;

  // Connections (http_door_connections.cc).
  void Attach(Connection* connection, evhttp_connection* evcon)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void MarkClosed(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void ArmHeaderDeadline(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void ArmSendDeadline(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // At the limit: closes the connection waiting longest for its next
  // request; false when none is waiting.
  bool CloseLongestWaiting() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Requests (http_door_requests.cc).
  void Handle(Connection* connection, evhttp_request* request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Reads (http_door_reads.cc).
  // Starts an engine read for `exchange`, or answers its refusal.
  void StartRead(Exchange* exchange, const DoorRead& read)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void Hold(Exchange* exchange) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Gives the connection back to evhttp. REQUIRES: Send follows at once.
  void Unhold(Exchange* exchange) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The engine has completed `exchange`'s read (its callback, on this
  // thread).
  void Deliver(Exchange* exchange, ReadOutcome outcome)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Answers (http_door_answers.cc).
  // Writes `reply` as the answer to `exchange`'s request; the exchange ends
  // in OnReplyComplete or OnClosed.
  void Send(Exchange* exchange, HttpReply reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Writes a sidecar-produced answer to a request that started no read.
  void Answer(Connection* connection, evhttp_request* request, HttpReply reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Writes `reply` straight to the connection, then closes it.
  void AnswerRawAndClose(Connection* connection, const HttpReply& reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void End(Exchange* exchange) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Writes what evhttp queued on `connection` now (see the definition).
  void WriteNow(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Teardown (http_door.cc).
  // The destructor's steps: cancel the reads in flight, then, once the
  // engine has completed them all, free evhttp and every connection.
  void BeginTeardown() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void FinishTeardown() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Constant after Bind.
  const HttpDoorOptions options_;
  ReadCore& core_;
  hedge::EventLoop& loop_;
  event_base* base_ = nullptr;  // the engine's
  ListenAddress address_;

  // The engine's loop thread (bound by Bind); the destructor's if the loop
  // is not running.
  hedge::ThreadChecker door_thread_;
  evhttp* http_ ABSL_GUARDED_BY(door_thread_) = nullptr;
  evconnlistener* listener_ ABSL_GUARDED_BY(door_thread_) = nullptr;
  std::unique_ptr<AcceptBackoff> accept_backoff_ ABSL_GUARDED_BY(door_thread_);
  absl::flat_hash_map<bufferevent*, std::unique_ptr<Connection>> connections_
      ABSL_GUARDED_BY(door_thread_);
  int64_t open_connections_ ABSL_GUARDED_BY(door_thread_) = 0;
  // At the limit with none waiting: accepting is paused until one closes.
  bool accepting_paused_ ABSL_GUARDED_BY(door_thread_) = false;
  uint64_t idle_order_ ABSL_GUARDED_BY(door_thread_) = 0;
  uint64_t refused_ ABSL_GUARDED_BY(door_thread_) = 0;
  uint64_t idle_closed_ ABSL_GUARDED_BY(door_thread_) = 0;
  bool stopping_ ABSL_GUARDED_BY(door_thread_) = false;  // the destructor runs
  // Engine reads whose callback has not run yet.
  int64_t outstanding_ ABSL_GUARDED_BY(door_thread_) = 0;

  // Set on the loop thread once FinishTeardown has run; the destructor
  // waits for it.
  TeardownLatch torn_down_;
};

}  // namespace tailgate::server::http_door

#endif  // TAILGATE_SERVER_HTTP_DOOR_HTTP_DOOR_IMPL_H_
