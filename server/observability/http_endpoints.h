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

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/net/accept_backoff.h"
#include "server/net/listen_address.h"

struct event;
struct event_base;
struct evhttp;
struct evhttp_request;

namespace tailgate::server {

class HttpEndpoints {
 public:
  struct Handlers {
    std::function<std::string()> metrics;  // the exposition text
    std::function<bool()> ready;           // false while draining
    // Empty: always live. Runs on the listener's thread; may block briefly.
    std::function<absl::Status()> live;
    // accept() failed (errno, failures); the listener pauses for a second.
    AcceptBackoff::Report accept_failed;
  };

  // Binds `address` (TCP only) and starts serving.
  static absl::StatusOr<std::unique_ptr<HttpEndpoints>> Start(
      const ListenAddress& address, Handlers handlers);

  ~HttpEndpoints();
  HttpEndpoints(const HttpEndpoints&) = delete;
  HttpEndpoints& operator=(const HttpEndpoints&) = delete;

  // The bound address, with the real port when 0 was asked for.
  const ListenAddress& address() const { return address_; }

 private:
  explicit HttpEndpoints(Handlers handlers);
  absl::Status Bind(const ListenAddress& address);
  static void OnRequest(evhttp_request* request, void* self) noexcept;
  static void OnStop(int fd, short what, void* base) noexcept;
  void Handle(evhttp_request* request);

  // Constant after Start returns.
  const Handlers handlers_;
  event_base* base_ = nullptr;
  evhttp* http_ = nullptr;
  // Activated by the destructor to break the loop. (A bare
  // event_base_loopbreak before the loop has started would be lost.)
  event* stop_ = nullptr;
  ListenAddress address_;

  std::unique_ptr<AcceptBackoff> accept_backoff_;
  std::thread thread_;  // runs base_'s loop
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_OBSERVABILITY_HTTP_ENDPOINTS_H_
