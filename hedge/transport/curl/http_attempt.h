// HttpAttempt: one HTTP GET/HEAD transfer on a libcurl easy handle.
//
// It configures the handle (no proxy from the environment, no redirects, no
// content decoding, path sent as is, TCP_NODELAY, Accept-Encoding: identity
// unless the caller sent one), collects the response headers (keeping only
// the final response's, with count and size limits) and the body (aborting
// at max_body_bytes + 1, or at once when Content-Length announces more), and
// classifies how the transfer ended.
//
// It also notes when curl began the transfer (began()): the moment its
// request was about to be written, less the time curl spent connecting.
// Time the transfer spent before that, waiting its turn in a loop busy
// with other transfers, is the sidecar's own and says nothing of the
// replica; connecting does.
//
// The easy handle is kept across transfers (curl_easy_reset), so an object
// can be pooled; connections live in the multi handle's cache, not here.
//
// Thread safety: loop thread only, like every easy handle.

#ifndef TAILGATE_HEDGE_TRANSPORT_CURL_HTTP_ATTEMPT_H_
#define TAILGATE_HEDGE_TRANSPORT_CURL_HTTP_ATTEMPT_H_

#include <curl/curl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "hedge/clock.h"
#include "hedge/config/engine_config.h"
#include "hedge/decision/read_decision.h"
#include "hedge/hygiene/http_hygiene.h"
#include "hedge/transport/curl/warm_connections.h"

namespace tailgate::hedge::transport {

struct AttemptLimits {
  int64_t max_body_bytes = int64_t{4} << 20;
  int max_headers = 100;
  int64_t max_header_bytes = 64 << 10;
};

struct AttemptRequest {
  std::string url;  // replica origin + base path + target
  bool head = false;
  const std::vector<hygiene::HttpHeader>* headers =
      nullptr;  // sanitized; not owned
  HttpVersion http_version = HttpVersion::kHttp1;
  const std::string* ca_file = nullptr;  // not owned; "" = system CAs
  WarmConnections* warm = nullptr;       // not owned; null = curl's sockets
  // "HOST:PORT:ADDRESS:PORT" (CURLOPT_CONNECT_TO): connect to ADDRESS
  // instead of resolving HOST, which the URL and Host header keep. Empty:
  // curl resolves the URL's host.
  std::string connect_to;
  // Stamps began(); null: began() stays unset.
  const Clock* clock = nullptr;  // not owned
};

class HttpAttempt {
 public:
  HttpAttempt();
  ~HttpAttempt();
  HttpAttempt(const HttpAttempt&) = delete;
  HttpAttempt& operator=(const HttpAttempt&) = delete;

  // Resets the handle and the collected response, then configures a new
  // transfer. `owner` is stored as CURLOPT_PRIVATE.
  absl::Status Prepare(const AttemptRequest& request,
                       const AttemptLimits& limits, void* owner);

  CURL* handle() const { return easy_; }

  // How the transfer ended, given the code curl reported for it.
  AttemptOutcome Classify(CURLcode code) const;

  // The collected response; valid after a kSuccess or kServerError outcome.
  int status() const;
  std::vector<hygiene::HttpHeader> TakeHeaders() { return std::move(headers_); }
  // The value of the first response header named `name` (any case), or
  // empty; before TakeHeaders.
  absl::string_view HeaderValue(absl::string_view name) const;
  std::string TakeBody() { return std::move(body_); }
  // Frees the collected body (a cancelled loser's partial one), so an idle
  // pooled handle does not keep up to max_body_bytes.
  void ReleaseBody() { std::string().swap(body_); }
  // When curl began the transfer (see above), on the request's clock;
  // unset until its request is about to be written, and for a transfer
  // prepared without a clock.
  std::optional<absl::Time> began() const { return began_; }

  // Response bytes received so far, headers and body (before TakeBody).
  int64_t bytes_received() const {
    return header_bytes_ + static_cast<int64_t>(body_.size());
  }

 private:
  static size_t OnHeader(char* data, size_t size, size_t count,
                         void* self) noexcept;
  static size_t OnBody(char* data, size_t size, size_t count,
                       void* self) noexcept;
  // CURLOPT_PREREQFUNCTION: the connection is ready, the request not sent.
  static int OnRequestReady(void* self, char* primary_ip, char* local_ip,
                            int primary_port, int local_port) noexcept;
  bool AddHeaderLine(const char* data, size_t length);
  bool OnHeadersComplete();

  CURL* const easy_;
  struct curl_slist* request_headers_ = nullptr;
  struct curl_slist* connect_to_ = nullptr;  // CURLOPT_CONNECT_TO
  AttemptLimits limits_;
  bool head_ = false;
  const Clock* clock_ = nullptr;
  std::optional<absl::Time> began_;
  std::vector<hygiene::HttpHeader> headers_;
  int64_t header_bytes_ = 0;
  std::string body_;
  bool too_large_ = false;
  bool header_overflow_ = false;
};

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_CURL_HTTP_ATTEMPT_H_
