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
//  kMalformedHeaders  a good status line and headers, "Content-Length:
//                     <body size>", the line "this header line has no colon",
//                     then the body, then a clean close. curl:
//                     CURLE_WEIRD_SERVER_REPLY ("Header without colon").
//  kResetAtOnce       writes nothing and aborts the connection with a bare
//                     RST (no FIN first). curl: CURLE_RECV_ERROR.
// kCloseMidBody and kMalformedHeaders write the status line as
// "HTTP/1.1 <status> Fault". The waiting faults (kHang, kDrip,
// kStallAfterStatus, kHugeContentLength, kEndlessChunked) keep the
// connection until the client closes it; that close counts in
// client_disconnects_before_response(), and so does a close during the
// delay. A HEAD answer carries no body bytes: kDrip, kStallAfterStatus,
// kHugeContentLength and kEndlessChunked then send their headers and
// complete, kCloseMidBody and kMalformedHeaders send theirs and close. The
// faults that frame the body write Content-Length (or Transfer-Encoding)
// themselves and ignore those two in `headers`.
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

struct ReplicaOptions {
  // The port on 127.0.0.1; 0 picks a free one. The socket is bound with
  // SO_REUSEADDR, so a test can restart a replica on the port of one it
  // destroyed.
  int port = 0;
  // The loopback IPv4 address to listen on (Linux answers on all of
  // 127.0.0.0/8), so that replicas on 127.0.0.2, 127.0.0.3... can share a
  // port as the pods behind one name do.
  std::string address = "127.0.0.1";
  // Keep every request for requests(). Turn off for long experiment runs;
  // the counters and WaitForRequests work either way.
  bool record_requests = true;
};

class Replica {
 public:
  // Listens and starts the loop thread. An empty handler answers 500.
  static absl::StatusOr<std::unique_ptr<Replica>> Start(
      Handler handler, const ReplicaOptions& options = {});

  // Stops the loop, joins its thread and closes every connection and the
  // listening socket. Requests still pending get no answer; their closes do
  // not count as client disconnects.
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  int port() const;
  std::string url() const;  // "http://ADDRESS:PORT", no trailing slash

  // Requests that arrive from now on get `handler`.
  void SetHandler(Handler handler);

  // Every request received so far, in order of arrival (a copy); empty
  // unless options.record_requests.
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
