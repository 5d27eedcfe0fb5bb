// HttpEndpoints: the plain-HTTP metrics listener (--metrics_listen), served
// by libevent's evhttp on a thread of its own.
//
//   GET /metrics  200, Prometheus text (version 0.0.4)
//   GET /healthz  200 "ok" while `live` says so (the gRPC door serves a
//                 health check), else 503 with its message: liveness
//   (the listener pauses accepting after a failed accept(), AcceptBackoff)
//   GET /readyz   200 "ready" while serving, 503 "draining" once draining
//   other paths   404; methods other than GET and HEAD: 405
//
// Connections (HttpEndpointsLimits): at most max_connections are open; at
// the limit a new connection closes the one idle longest (no request bytes
// since its accept or its last answer), or, with none idle, is closed
// itself, and the listener accepts nothing more until a connection closes
// (so that a burst of connections waits in the kernel's backlog instead of
// holding descriptors until their refusal runs). A request's headers must arrive whole within header_timeout of
// the accept or of the previous answer, bytes arriving meanwhile extending
// nothing; an answer not taken by the client within send_timeout closes
// the connection.
//
// Example:
//   absl::StatusOr<std::unique_ptr<HttpEndpoints>> http = HttpEndpoints::Start(
//       address, {[&] { return RenderMetrics(...); },
//                 [&] { return !gate.draining(); }});
//   log.Info("listening", {{"service", "metrics"},
//                          {"addr", (*http)->address().ToString()}});
//
// Thread safety: the handlers run on the listener's thread and must be safe
// to call from it. The destructor stops the thread and joins it.

#ifndef TAILGATE_SERVER_OBSERVABILITY_HTTP_ENDPOINTS_H_
#define TAILGATE_SERVER_OBSERVABILITY_HTTP_ENDPOINTS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/net/accept_backoff.h"
#include "server/net/listen_address.h"

struct bufferevent;
struct event;
struct event_base;
struct evbuffer;
struct evbuffer_cb_entry;
struct evbuffer_cb_info;
struct evhttp;
struct evhttp_connection;
struct evhttp_request;

namespace tailgate::server {

// The metrics listener's connection limits; tests set them small.
struct HttpEndpointsLimits {
  // Scrapes and probes are few (the sidecar sets ConnectionLimits::metrics).
  int max_connections = 16;
  // From accept, or from the end of the previous answer, to the end of the
  // next request's headers; not extended by the bytes that arrive.
  absl::Duration header_timeout = absl::Seconds(5);
  // From the start of an answer to the client having taken all of it.
  absl::Duration send_timeout = absl::Seconds(10);
  // connections_closed is called at most once per report_interval.
  absl::Duration report_interval = absl::Seconds(10);
};

class HttpEndpoints {
 public:
  struct Handlers {
    std::function<std::string()> metrics;  // the exposition text
    std::function<bool()> ready;           // false while draining
    // Empty: always live. Runs on the listener's thread; may block briefly.
    std::function<absl::Status()> live;
    // accept() failed (errno, failures); the listener pauses for a second.
    AcceptBackoff::Report accept_failed;
    // Connections closed at the limit so far: idle ones closed for a new
    // one, new ones closed with none idle. Called on the listener's thread
    // after such a close, at most once per report_interval (a close within
    // the interval is reported at its end).
    std::function<void(uint64_t idle_closed, uint64_t refused)>
        connections_closed;
  };

  // Counts published by the listener's thread, for tests.
  struct Connections {
    int64_t open = 0;
    int64_t idle = 0;  // open, attached, no request in progress
  };

  // Binds `address` (TCP only) and starts serving.
  static absl::StatusOr<std::unique_ptr<HttpEndpoints>> Start(
      const ListenAddress& address, Handlers handlers,
      HttpEndpointsLimits limits = {});

  ~HttpEndpoints();
  HttpEndpoints(const HttpEndpoints&) = delete;
  HttpEndpoints& operator=(const HttpEndpoints&) = delete;

  // The bound address, with the real port when 0 was asked for.
  const ListenAddress& address() const { return address_; }

  // Any thread; as of the listener's last change.
  Connections connections() const {
    return {open_published_.load(), idle_published_.load()};
  }

 private:
  // One accepted connection, from accept until evhttp frees it (evhttp owns
  // the evhttp_connection and its bufferevent). Listener thread only.
  struct Connection;

  HttpEndpoints(Handlers handlers, HttpEndpointsLimits limits);
  absl::Status Bind(const ListenAddress& address);
  static void OnRequest(evhttp_request* request, void* self) noexcept;
  static void OnStop(int fd, short what, void* base) noexcept;
  static bufferevent* OnAccept(event_base* base, void* self) noexcept;
  static void OnRegister(int fd, short what, void* arg) noexcept;
  static void OnDeadline(int fd, short what, void* arg) noexcept;
  static void OnInput(evbuffer* input, const evbuffer_cb_info* info,
                      void* arg) noexcept;
  static void OnReplyComplete(evhttp_request* request, void* arg) noexcept;
  static void OnClosed(evhttp_connection* evcon, void* arg) noexcept;
  static void OnReportTimer(int fd, short what, void* self) noexcept;
  void Handle(evhttp_request* request);
  void Attach(Connection* connection, evhttp_connection* evcon);
  void MarkClosed(Connection* connection);
  void Forget(Connection* connection);
  void Arm(Connection* connection, absl::Duration timeout);
  // Closes the attached connection idle longest; false if none is idle.
  bool CloseOldestIdle();
  void CountClosed();
  void Report();
  void Publish();

  // Constant after Start returns.
  const Handlers handlers_;
  const HttpEndpointsLimits limits_;
  event_base* base_ = nullptr;
  evhttp* http_ = nullptr;
  // Activated by the destructor to break the loop. (A bare
  // event_base_loopbreak before the loop has started would be lost.)
  event* stop_ = nullptr;
  ListenAddress address_;

  evconnlistener* listener_ = nullptr;  // evhttp's, for the bound socket
  std::unique_ptr<AcceptBackoff> accept_backoff_;

  // Listener thread (the destructor's once the loop has stopped).
  absl::flat_hash_map<bufferevent*, std::unique_ptr<Connection>> connections_;
  int64_t open_ = 0;
  bool accepting_paused_ = false;  // at the limit with none idle
  uint64_t idle_order_ = 0;  // stamps a connection turning idle
  uint64_t idle_closed_ = 0;
  uint64_t refused_ = 0;
  event* report_timer_ = nullptr;  // pending while a report interval runs
  bool report_due_ = false;        // a close within the running interval
  std::atomic<int64_t> open_published_{0};
  std::atomic<int64_t> idle_published_{0};

  std::thread thread_;  // runs base_'s loop
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_OBSERVABILITY_HTTP_ENDPOINTS_H_
