// HTTP hygiene for the requests Tailgate forwards and the responses it
// returns: validation of the caller's request target and headers, and
// removal of hop-by-hop headers in both directions (RFC 9110 section 7.6.1).
//
//   if (absl::Status s = ValidateRequestTarget(request.path()); !s.ok()) ...
//   absl::StatusOr<std::vector<HttpHeader>> headers =
//       SanitizeRequestHeaders(caller_headers);
//   ...
//   response_headers = SanitizeResponseHeaders(std::move(response_headers));
//
// The request target is never decoded or normalised: what passes validation
// is sent byte for byte (see BuildAttemptUrl in replica_url.h). A target
// with a "." or ".." path segment, plain or percent-encoded, is refused
// rather than normalised: a replica that resolves it could serve a file
// above its base path.
//
// Thread safety: pure functions over values; safe from any thread.

#ifndef TAILGATE_HEDGE_HYGIENE_HTTP_HYGIENE_H_
#define TAILGATE_HEDGE_HYGIENE_HTTP_HYGIENE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tailgate::hygiene {

struct HttpHeader {
  std::string name;
  std::string value;
};

// Limits on what a caller may send. Exactly the limit is accepted.
inline constexpr size_t kMaxRequestTargetBytes = 8 * 1024;
inline constexpr size_t kMaxHeaderNameBytes = 256;
inline constexpr size_t kMaxHeaderValueBytes = 8 * 1024;
inline constexpr size_t kMaxRequestHeaders = 64;
// Sum of name and value sizes over all request headers.
inline constexpr size_t kMaxRequestHeaderBytes = 32 * 1024;

// OK when `path` is an origin-form request target ("/p/a%2Fb?q=1"): starts
// with "/" but not "//", at most kMaxRequestTargetBytes, every byte is
// printable ASCII other than space and "#", and no path segment is a dot
// segment. Anything else (CR, LF, NUL, tab, other control characters, DEL,
// non-ASCII bytes, absolute-form "http://...", authority-form "host:80",
// asterisk-form "*") is INVALID_ARGUMENT with a message starting "path ",
// e.g.
//   path contains a control character at byte 5
//   path "/%2e%2e/etc" has the dot segment "%2e%2e" at byte 1 (...)
// A dot segment is one that reads as "." or ".." once "%2E" and "%2e" are
// taken for "." and the segment's path parameters (from its first ";") are
// left out, where segments are separated by "/", "\", "%2F" and "%5C" (in
// either case): so "/.%2e/x", "/..;/x" and "/a%2F..%2Fb" are refused while
// "/...", "/..a", "/a%2Fb" and "/q?next=../x" (the query is not the path)
// are accepted.
absl::Status ValidateRequestTarget(absl::string_view path);

// True for an RFC 9110 tchar: ALPHA, DIGIT or one of !#$%&'*+-.^_`|~
bool IsTokenChar(char c);

// OK when `name` is a non-empty RFC 9110 token of at most
// kMaxHeaderNameBytes; else INVALID_ARGUMENT naming the header.
absl::Status ValidateHeaderName(absl::string_view name);

// OK when `value` has at most kMaxHeaderValueBytes and no CR, LF, NUL, DEL
// or other control character except HTAB. Bytes >= 0x80 (obs-text) pass.
// Else INVALID_ARGUMENT saying what and where (the caller knows the name;
// SanitizeRequestHeaders puts it in its message).
absl::Status ValidateHeaderValue(absl::string_view value);

// True, case-insensitively, for Connection, Keep-Alive, TE, Trailer,
// Transfer-Encoding, Upgrade and any name starting with "Proxy-".
bool IsHopByHop(absl::string_view name);

// The caller's headers as they may go upstream. INVALID_ARGUMENT, naming the
// header by index ("headers[3].name \"X Y\" is not a valid token"), when a
// name or value is invalid, when Host, Content-Length, Transfer-Encoding or
// Expect is present (in any case: the sidecar owns framing and Host), or when
// there are more than kMaxRequestHeaders headers or more than
// kMaxRequestHeaderBytes in total. Otherwise returns the headers in their
// order, duplicates kept, without hop-by-hop headers and without every
// header named in a Connection header's comma-separated options.
absl::StatusOr<std::vector<HttpHeader>> SanitizeRequestHeaders(
    absl::Span<const HttpHeader> headers);

// A replica's response headers without hop-by-hop headers, without the
// headers their Connection headers name and without headers whose name is
// not an RFC 9110 token; names in lower case (as HTTP/2 and gRPC callers
// expect, whatever each replica's capitalisation); values that are not
// valid UTF-8 read as ISO-8859-1 and re-encoded in UTF-8 (utf8.h), so that
// every protobuf parser accepts them. Order and duplicates are kept.
std::vector<HttpHeader> SanitizeResponseHeaders(
    std::vector<HttpHeader> headers);

// True when a header called `name` (case-insensitive) is in `headers`.
bool HasHeader(absl::Span<const HttpHeader> headers, absl::string_view name);

}  // namespace tailgate::hygiene

#endif  // TAILGATE_HEDGE_HYGIENE_HTTP_HYGIENE_H_
