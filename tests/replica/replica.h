// Replica: a scriptable HTTP/1.1 server on 127.0.0.1 for tests and for the
// straggler experiment, built on libevent's evhttp.
//
// A Replica asks its Handler how to answer each request: status, headers,
// body, how long to wait first, and optionally a Fault — never answer, drip
// the body, stall after the status line, cut the connection mid-body, reset
// it, or write a malformed response. It records every request and counts
// connections, so a test can assert that a client reused its connection, or
// that a cancelled hedge loser really went away.
//
// Example:
//
//   absl::StatusOr<std::unique_ptr<Replica>> replica =
//       Replica::Start([](const ReplicaRequest& request) {
//         ReplicaResponse response;
//         response.body = "hello";
//         response.delay = absl::Milliseconds(50);
//         return response;
//       });
//   ASSERT_TRUE(replica.ok()) << replica.status();
//   ... GET (*replica)->url() + "/path" ...
//   EXPECT_TRUE((*replica)->WaitForRequests(1, absl::Seconds(1)));
//
// HTTP/1.1 keep-alive works as usual: a client that reuses its connection is
// served on it, and connections_accepted() does not grow.
//
// Thread safety: every public member function is safe from any thread. The
// handler runs on the replica's own event-loop thread, one call at a time;
// it must not block (a delay belongs in ReplicaResponse::delay, which is a
// timer on the loop, so any number of requests can wait at once) and must
// not destroy the Replica. The destructor must not run on the loop thread.

#ifndef TAILGATE_TESTS_REPLICA_REPLICA_H_
#define TAILGATE_TESTS_REPLICA_REPLICA_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tailgate::testing {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// One request as the replica received it.
struct ReplicaRequest {
  uint64_t id = 0;          // 0, 1, 2... in order of arrival
  uint64_t connection = 0;  // 0, 1, 2... in order of accept
  std::string method;       // "GET", "HEAD", ...
  std::string uri;          // the request target, byte for byte
  HeaderList headers;       // in the order received
};

// How to answer one request.
//
// Before anything is written the replica waits `delay` (a timer on the
// loop). Then, by `fault`:
//  kNone              a normal response: status, headers, body. The replica
//                     adds Content-Length (unless the handler set one; a
//                     wrong one is sent as given) and Date. HEAD gets the
//                     headers a GET would get, with no body.
//  kHang              never answers; keeps the connection open until the
//                     client closes it.
//  kDrip              headers with Content-Length: body.size(), then
//                     `drip_bytes` of body every `drip_interval`; the last
//                     byte goes out after ceil(size / drip_bytes) intervals.
//  kStallAfterStatus  status line and headers declaring Content-Length:
//                     max(body.size(), 1), then nothing.
//  kHugeContentLength headers declaring Content-Length: 1000000000000, then
//                     `body` (may be empty), then nothing.
//  kEndlessChunked    Transfer-Encoding: chunked, then a chunk of
//                     `drip_bytes` (taken from body, or "x" if it is empty)
//                     every `drip_interval`, never the last chunk.
//  kCloseMidBody      status line, headers, Content-Length: N with
//                     N = max(body.size(), 1), the first N / 2 body bytes,
//                     then a clean close (FIN). curl: CURLE_PARTIAL_FILE.
//  kMalformedStatus   exactly "HTTP/1.1 abc\r\n\r\n", then a clean close.
//                     curl 7.88: CURLE_UNSUPPORTED_PROTOCOL ("Unsupported
//                     HTTP version in response").
//  kMalformedHeaders  a good status line, "Content-Length: <body size>",
//                     then the line "this header line has no colon", then
//                     the body, then a clean close. curl:
//                     CURLE_WEIRD_SERVER_REPLY ("Header without colon").
//  kResetAtOnce       writes nothing and aborts the connection with a bare
//                     RST (no FIN first). curl: CURLE_RECV_ERROR.
// The waiting faults (kHang, kDrip, kStallAfterStatus, kHugeContentLength,
// kEndlessChunked) keep the connection until the client closes it; that
// close counts in client_disconnects_before_response(). For HEAD, the body
// faults send their headers and complete (a HEAD response has no body).
// For the faults that declare a length the replica writes Content-Length
// (or Transfer-Encoding) itself and ignores those two in `headers`.
struct ReplicaResponse {
  enum class Fault {
    kNone,
    kHang,
    kDrip,
    kStallAfterStatus,
    kHugeContentLength,
    kEndlessChunked,
    kCloseMidBody,
    kMalformedStatus,
    kMalformedHeaders,
    kResetAtOnce,
  };

  int status = 200;
  HeaderList headers;
  std::string body;
  absl::Duration delay = absl::ZeroDuration();
  Fault fault = Fault::kNone;
  size_t drip_bytes = 1;  // kDrip, kEndlessChunked; 0 is taken as 1
  absl::Duration drip_interval = absl::Milliseconds(1);
};

// Decides how to answer. Runs on the replica's loop thread; must not block.
using Handler = std::function<ReplicaResponse(const ReplicaRequest&)>;

// A handler that gives every request the same answer.
Handler Always(ReplicaResponse response);

class Replica {
 public:
  // Listens on 127.0.0.1:`port` (0: any free port; a fixed port is bound
  // with SO_REUSEADDR, so a test can restart a replica where a previous one
  // was) and starts the loop thread. An empty handler answers 500.
  static absl::StatusOr<std::unique_ptr<Replica>> Start(Handler handler,
                                                        int port = 0);

  // Stops the loop, joins its thread and closes every connection and the
  // listening socket. Requests still pending get no answer; their closes do
  // not count as client disconnects.
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  int port() const;
  std::string url() const;  // "http://127.0.0.1:PORT", no trailing slash

  // Requests that arrive from now on get `handler`.
  void SetHandler(Handler handler);

  // Every request received so far, in order of arrival (a copy).
  std::vector<ReplicaRequest> requests() const;
  int64_t requests_received() const;

  // TCP connections accepted so far / open now. A connection is open from
  // accept until either side closes it, whether or not it carried a
  // request.
  int64_t connections_accepted() const;
  int64_t open_connections() const;

  // Connections that the client closed (or reset) while the replica had not
  // finished answering a request on them: the delay had not run out, or the
  // fault was still hanging, dripping or stalling. This is how a test sees
  // that a cancelled attempt really went away.
  int64_t client_disconnects_before_response() const;

  // Block until the condition holds or `timeout` passes; return whether it
  // holds. They wait on the replica's state (no polling).
  bool WaitForRequests(int64_t n, absl::Duration timeout) const;  // >= n
  bool WaitForDisconnectsBeforeResponse(int64_t n,
                                        absl::Duration timeout) const;  // >= n
  bool WaitForOpenConnections(int64_t n,
                              absl::Duration timeout) const;  // == n

 private:
  class Impl;
  explicit Replica(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_REPLICA_REPLICA_H_
