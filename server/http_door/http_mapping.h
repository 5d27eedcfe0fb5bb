// The plain-HTTP door's mapping between HTTP/1.1 messages and reads: what a
// request becomes (a tailgate.v1 ReadRequest, so that it goes through the
// same validation as a gRPC read), what an engine answer or a refusal
// becomes. No I/O: the evhttp server (http_door.h) calls these.
//
// Request: GET or HEAD of an origin-form target. Control headers, removed
// before forwarding:
//   Tailgate-Upstream: NAME        the replica set ("" = default)
//   Tailgate-Tenant: NAME          the tenant (ReadRequest.tenant): up to 64
//                                  letters, digits, ".", "_", "-"
//   Tailgate-Hedge: off | DURATION no hedge, or this hedge delay
//   Tailgate-Timeout: DURATION     the read's deadline (> 0; the engine caps
//                                  it at --timeout)
// Any other Tailgate-* header is refused, so that a misspelt control is not
// forwarded to a replica unnoticed. Host and a zero Content-Length are
// dropped (the sidecar owns Host and framing); every other header goes into
// the descriptor, where hygiene::SanitizeRequestHeaders drops hop-by-hop
// ones and refuses the rest of what a gRPC descriptor may not carry.
// Framing that could hide a second request is refused: any
// Transfer-Encoding, a Content-Length above 0, or more than one
// Content-Length. So is a connection that sends a NUL byte anywhere
// (NulRefusal): evhttp would cut the header value holding it short.
//
// Response: the winner's status, its headers (without framing headers and
// without any tailgate-* header a replica sent, so they cannot pass for the
// sidecar's own), its body, and Tailgate-Attempts, Tailgate-Hedged,
// Tailgate-Hedge-Won. An error the sidecar produces has a status (table at
// ReplyForError), Tailgate-Error: <gRPC code name> and a one-line body.
//
// Thread safety: pure functions; safe from any thread.

#ifndef TAILGATE_SERVER_HTTP_DOOR_HTTP_MAPPING_H_
#define TAILGATE_SERVER_HTTP_DOOR_HTTP_MAPPING_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "hedge/hygiene/http_hygiene.h"
#include "hedge/transport/engine.h"
#include "proto/tailgate/v1/tailgate.pb.h"
#include "server/read/read_error.h"

namespace tailgate::server::http_door {

enum class HttpMethod { kGet, kHead, kOther };

// A request as the HTTP parser delivered it.
struct HttpRequestIn {
  HttpMethod method = HttpMethod::kGet;
  std::string target;                        // the request-target, raw
  std::vector<hygiene::HttpHeader> headers;  // as received, in order
};

// What a request asks for.
struct DoorRead {
  v1::ReadRequest request;  // path, method, headers, upstream, hedge
  // Tailgate-Timeout; nullopt: only the sidecar's --timeout applies.
  std::optional<absl::Duration> timeout;
};

// The read `in` asks for, or INVALID_ARGUMENT with a one-line message naming
// the header ("Tailgate-Timeout: want a duration such as 250ms or 1s, got
// \"soon\""). The method must be GET or HEAD (the caller answers 405 for
// others first). The target and forwarded headers are checked later, when
// the read starts (ReadCall::Start), exactly as for a gRPC descriptor.
absl::StatusOr<DoorRead> ReadFromHttp(const HttpRequestIn& in);

// The refusal for a request whose bytes hold a NUL, which evhttp, reading
// lines as C strings, would cut a header value short at. `line` is the
// line holding the NUL, up to it. INVALID_ARGUMENT naming the header when
// `line` starts with a header name and a colon:
//   header "X-Trace" contains NUL
// else (the request line, a header name, a folded line):
//   the request line or a header name contains NUL
absl::Status NulRefusal(absl::string_view line);

// A reply to write.
struct HttpReply {
  int status = 200;
  std::vector<hygiene::HttpHeader> headers;
  std::string body;
  // Send Connection: close and close after the reply (a malformed request
  // leaves the connection's framing in doubt).
  bool close = false;
};

// The reply for the engine's answer to a GET or (if `head`) HEAD read. For
// GET the replica's Content-Length is dropped: the server writes the length
// of the body it sends. For HEAD it is kept (the body is empty).
HttpReply ReplyForResponse(hedge::EngineResponse response, bool head);

// The reply for a read that ended without an answer, by its ReadEnd:
//   kInvalidArgument                          400, connection closed
//   kUnknownUpstream                          404
//   kTooManyCalls, kBufferFull, kOverloaded   503 with Retry-After: 1
//   kDraining, kShuttingDown, kNoAddress      503
//   kNoReplica, kTooLarge, kUpstreamFailure   502
//   kDeadlineExceeded                         504
//   kCancelled                                499 (never written: the
//                                             client has gone), closed
//   kInternal                                 500
// Each with Tailgate-Error: the gRPC code's name (INVALID_ARGUMENT, ...),
// Content-Type text/plain and the status message on one line.
HttpReply ReplyForError(const ReadError& error);

// 405 for a method other than GET and HEAD, with Allow: GET, HEAD.
HttpReply MethodNotAllowed();

}  // namespace tailgate::server::http_door

#endif  // TAILGATE_SERVER_HTTP_DOOR_HTTP_MAPPING_H_
