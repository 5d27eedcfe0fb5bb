#include "hedge/hygiene/http_hygiene.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "hedge/hygiene/utf8.h"

namespace tailgate::hygiene {
namespace {

// Header names are quoted in messages escaped, and cut short: a 256-byte
// name in an error helps nobody.
constexpr size_t kMaxQuotedBytes = 64;

std::string Quote(absl::string_view text) {
  const bool cut = text.size() > kMaxQuotedBytes;
  return absl::StrCat("\"", absl::CHexEscape(text.substr(0, kMaxQuotedBytes)),
                      cut ? "...\"" : "\"");
}

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

// Framing and Host belong to the sidecar; a caller setting them could
// smuggle a second request or reach another virtual host.
absl::string_view WhyForbidden(absl::string_view name) {
  if (absl::EqualsIgnoreCase(name, "Host")) {
    return "the sidecar sets Host for each replica";
  }
  if (absl::EqualsIgnoreCase(name, "Content-Length") ||
      absl::EqualsIgnoreCase(name, "Transfer-Encoding") ||
      absl::EqualsIgnoreCase(name, "Expect")) {
    return "GET and HEAD reads carry no request body";
  }
  return "";
}

// `subject` says which name this is: "header name" or "headers[3].name".
absl::Status CheckName(absl::string_view subject, absl::string_view name) {
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(subject, " is empty"));
  }
  if (name.size() > kMaxHeaderNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(subject, " ", Quote(name), " is ", name.size(),
                     " bytes, over the limit of ", kMaxHeaderNameBytes));
  }
  if (!std::all_of(name.begin(), name.end(), IsTokenChar)) {
    return absl::InvalidArgumentError(
        absl::StrCat(subject, " ", Quote(name), " is not a valid token"));
  }
  return absl::OkStatus();
}

// `subject` says whose value this is: "header value" or
// "headers[3].value (header \"X-Foo\")".
absl::Status CheckValue(absl::string_view subject, absl::string_view value) {
  if (value.size() > kMaxHeaderValueBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(subject, " is ", value.size(),
                     " bytes, over the limit of ", kMaxHeaderValueBytes));
  }
  for (size_t i = 0; i < value.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (!IsControl(c) || c == '\t') continue;
    const absl::string_view what = c == '\r'   ? "CR"
                                   : c == '\n' ? "LF"
                                   : c == '\0' ? "NUL"
                                               : "a control character";
    return absl::InvalidArgumentError(
        absl::StrCat(subject, " contains ", what, " at byte ", i));
  }
  return absl::OkStatus();
}

absl::Status CheckLimits(absl::Span<const HttpHeader> headers) {
  if (headers.size() > kMaxRequestHeaders) {
    return absl::InvalidArgumentError(
        absl::StrCat("headers has ", headers.size(),
                     " entries, over the limit of ", kMaxRequestHeaders));
  }
  size_t total = 0;
  for (const HttpHeader& header : headers) {
    total += header.name.size() + header.value.size();
  }
  if (total > kMaxRequestHeaderBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("headers total ", total,
                     " bytes (names plus values), over the limit of ",
                     kMaxRequestHeaderBytes));
  }
  return absl::OkStatus();
}

// The lower-cased options of every Connection header: the headers that
// the sender meant for this hop only.
absl::flat_hash_set<std::string> ConnectionOptions(
    absl::Span<const HttpHeader> headers) {
  absl::flat_hash_set<std::string> options;
  for (const HttpHeader& header : headers) {
    if (!absl::EqualsIgnoreCase(header.name, "Connection")) continue;
    for (const absl::string_view option : absl::StrSplit(header.value, ',')) {
      const absl::string_view trimmed = absl::StripAsciiWhitespace(option);
      if (!trimmed.empty()) options.insert(absl::AsciiStrToLower(trimmed));
    }
  }
  return options;
}

std::vector<HttpHeader> DropHopByHop(std::vector<HttpHeader> headers) {
  const absl::flat_hash_set<std::string> options = ConnectionOptions(headers);
  headers.erase(std::remove_if(headers.begin(), headers.end(),
                               [&options](const HttpHeader& header) {
                                 return IsHopByHop(header.name) ||
                                        options.contains(
                                            absl::AsciiStrToLower(header.name));
                               }),
                headers.end());
  return headers;
}

// The width of the segment separator `rest` starts with, or 0: "/", "\\"
// (which WHATWG parsers and some servers read as "/"), their escapes "%2F"
// and "%5C" (which some servers decode before splitting), and the end of
// the path.
size_t SeparatorWidth(absl::string_view rest) {
  if (rest.empty() || rest[0] == '/' || rest[0] == '\\') return 1;
  if (absl::StartsWithIgnoreCase(rest, "%2f") ||
      absl::StartsWithIgnoreCase(rest, "%5c")) {
    return 3;
  }
  return 0;
}

// The first segment of the path part of `target` (before any "?") that
// reads as "." or ".." with "%2E" or "%2e" taken for a dot and with its
// path parameters (from its first ";", which some servers strip before
// resolving dots) left out; empty when there is none. "..." and "..a"
// are names, not dot segments.
absl::string_view FindDotSegment(absl::string_view target) {
  const absl::string_view path = target.substr(0, target.find('?'));
  size_t begin = 0;
  int dots = 0;
  bool other = false;   // a byte other than a dot before the parameters
  bool params = false;  // past the segment's first ";"
  for (size_t i = 0; i <= path.size();) {
    const absl::string_view rest = path.substr(i);
    if (const size_t separator = SeparatorWidth(rest); separator > 0) {
      if (!other && (dots == 1 || dots == 2)) {
        return path.substr(begin, i - begin);
      }
      i += separator;
      begin = i;
      dots = 0;
      other = params = false;
    } else if (params) {
      ++i;
    } else if (rest[0] == ';') {
      params = true;
      ++i;
    } else if (rest[0] == '.') {
      ++dots;
      ++i;
    } else if (absl::StartsWithIgnoreCase(rest, "%2e")) {
      ++dots;
      i += 3;
    } else {
      other = true;
      ++i;
    }
  }
  return "";
}

absl::Status CheckTargetBytes(absl::string_view path) {
  for (size_t i = 0; i < path.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(path[i]);
    absl::string_view what;
    absl::string_view hint;
    if (IsControl(c)) {
      what = "a control character";
    } else if (c == ' ') {
      what = "a space";
      hint = " (percent-encode it as %20)";
    } else if (c == '#') {
      what = "\"#\"";
      hint = " (fragments are not sent upstream)";
    } else if (c >= 0x80) {
      what = "a non-ASCII byte";
      hint = " (percent-encode it)";
    } else {
      continue;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("path contains ", what, " at byte ", i, hint));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateRequestTarget(absl::string_view path) {
  if (path.size() > kMaxRequestTargetBytes) {
    return absl::InvalidArgumentError(absl::StrCat("path is ", path.size(),
                                                   " bytes, over the limit of ",
                                                   kMaxRequestTargetBytes));
  }
  if (!absl::StartsWith(path, "/")) {
    return absl::InvalidArgumentError(
        path.empty() ? "path must start with \"/\" (it is empty)"
                     : "path must start with \"/\" (only origin-form targets "
                       "are accepted)");
  }
  if (absl::StartsWith(path, "//")) {
    return absl::InvalidArgumentError(
        "path must not start with \"//\" (URL parsers read it as an "
        "authority)");
  }
  if (absl::Status bytes = CheckTargetBytes(path); !bytes.ok()) return bytes;
  if (const absl::string_view dots = FindDotSegment(path); !dots.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "path ", Quote(path), " has the dot segment ", Quote(dots), " at byte ",
        dots.data() - path.data(),
        " (a replica would resolve it, even above its base path)"));
  }
  return absl::OkStatus();
}

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(c) ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) !=
             absl::string_view::npos;
}

absl::Status ValidateHeaderName(absl::string_view name) {
  return CheckName("header name", name);
}

absl::Status ValidateHeaderValue(absl::string_view value) {
  return CheckValue("header value", value);
}

bool IsHopByHop(absl::string_view name) {
  return absl::StartsWithIgnoreCase(name, "Proxy-") ||
         absl::EqualsIgnoreCase(name, "Connection") ||
         absl::EqualsIgnoreCase(name, "Keep-Alive") ||
         absl::EqualsIgnoreCase(name, "TE") ||
         absl::EqualsIgnoreCase(name, "Trailer") ||
         absl::EqualsIgnoreCase(name, "Transfer-Encoding") ||
         absl::EqualsIgnoreCase(name, "Upgrade");
}

absl::StatusOr<std::vector<HttpHeader>> SanitizeRequestHeaders(
    absl::Span<const HttpHeader> headers) {
  if (absl::Status limits = CheckLimits(headers); !limits.ok()) return limits;
  for (size_t i = 0; i < headers.size(); ++i) {
    const HttpHeader& header = headers[i];
    const std::string at = absl::StrCat("headers[", i, "]");
    if (absl::Status name = CheckName(absl::StrCat(at, ".name"), header.name);
        !name.ok()) {
      return name;
    }
    if (absl::Status value = CheckValue(
            absl::StrCat(at, ".value (header ", Quote(header.name), ")"),
            header.value);
        !value.ok()) {
      return value;
    }
    if (const absl::string_view why = WhyForbidden(header.name); !why.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, " ", Quote(header.name), " is not allowed: ", why));
    }
  }
  return DropHopByHop(std::vector<HttpHeader>(headers.begin(), headers.end()));
}

std::vector<HttpHeader> SanitizeResponseHeaders(
    std::vector<HttpHeader> headers) {
  headers = DropHopByHop(std::move(headers));
  // A name that is not a token cannot be a header name in HTTP/2 or gRPC.
  headers.erase(std::remove_if(headers.begin(), headers.end(),
                               [](const HttpHeader& header) {
                                 return header.name.empty() ||
                                        !std::all_of(header.name.begin(),
                                                     header.name.end(),
                                                     IsTokenChar);
                               }),
                headers.end());
  for (HttpHeader& header : headers) {
    absl::AsciiStrToLower(&header.name);
    header.value = HeaderValueAsUtf8(std::move(header.value));
  }
  return headers;
}

bool HasHeader(absl::Span<const HttpHeader> headers, absl::string_view name) {
  return std::any_of(headers.begin(), headers.end(),
                     [name](const HttpHeader& header) {
                       return absl::EqualsIgnoreCase(header.name, name);
                     });
}

}  // namespace tailgate::hygiene
