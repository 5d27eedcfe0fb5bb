#include "server/observability/http_endpoints.h"

#include "server/net/listen_socket.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/thread.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/observability/metrics.h"

namespace tailgate::server {
namespace {

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

absl::StatusOr<std::unique_ptr<HttpEndpoints>> HttpEndpoints::Start(
    const ListenAddress& address, Handlers handlers) {
  if (address.is_unix) {
    return absl::InvalidArgumentError(
        "the metrics listener takes host:port, not a unix socket");
  }
  UseThreads();
  std::unique_ptr<HttpEndpoints> endpoints(
      new HttpEndpoints(std::move(handlers)));
  if (absl::Status bound = endpoints->Bind(address); !bound.ok()) {
    return bound;
  }
  event_base* base = endpoints->base_;
  endpoints->thread_ = std::thread([base] { event_base_dispatch(base); });
  return endpoints;
}

HttpEndpoints::HttpEndpoints(Handlers handlers)
    : handlers_(std::move(handlers)) {}

absl::Status HttpEndpoints::Bind(const ListenAddress& address) {
  base_ = event_base_new();
  if (base_ != nullptr) http_ = evhttp_new(base_);
  if (http_ != nullptr) {
    stop_ = event_new(base_, -1, 0, &HttpEndpoints::OnStop, base_);
  }
  if (stop_ == nullptr) {
    return absl::InternalError("cannot create the metrics HTTP server");
  }
  evhttp_set_allowed_methods(http_, kAllMethods);
  // A scrape is one small GET: idle or oversized clients are cut off.
  evhttp_set_timeout(http_, kIdleTimeoutSeconds);
  evhttp_set_max_headers_size(http_, kMaxHeaderBytes);
  evhttp_set_max_body_size(http_, 0);
  evhttp_set_gencb(http_, &HttpEndpoints::OnRequest, this);
  evhttp_bound_socket* socket = evhttp_bind_socket_with_handle(
      http_, address.host.c_str(), static_cast<ev_uint16_t>(address.port));
  if (socket == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", address.ToString()));
  }
  absl::StatusOr<int> port = LocalPort(evhttp_bound_socket_get_fd(socket));
  if (!port.ok()) return port.status();
  address_ = address.WithPort(*port);
  accept_backoff_ = AcceptBackoff::Install(
      evhttp_bound_socket_get_listener(socket), base_, kAcceptPause,
      handlers_.accept_failed);
  return absl::OkStatus();
}

HttpEndpoints::~HttpEndpoints() {
  if (thread_.joinable()) {
    event_active(stop_, EV_READ, 0);
    thread_.join();
  }
  if (stop_ != nullptr) event_free(stop_);
  accept_backoff_.reset();  // before evhttp_free frees its listener
  if (http_ != nullptr) evhttp_free(http_);
  if (base_ != nullptr) event_base_free(base_);
}

void HttpEndpoints::OnStop(int /*fd*/, short /*what*/, void* base) noexcept {
  event_base_loopbreak(static_cast<event_base*>(base));
}

void HttpEndpoints::OnRequest(evhttp_request* request, void* self) noexcept {
  static_cast<HttpEndpoints*>(self)->Handle(request);
}

void HttpEndpoints::Handle(evhttp_request* request) {
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
