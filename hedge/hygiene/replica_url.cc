#include "hedge/hygiene/replica_url.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace tailgate::hygiene {
namespace {

constexpr int kMaxPort = 65535;

// Quotes configuration text for an error message; CHexEscape keeps control
// bytes and quotes from reaching logs raw.
std::string Quote(absl::string_view text) {
  return absl::StrCat("\"", absl::CHexEscape(text), "\"");
}

absl::Status UrlError(absl::string_view url, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("backend ", Quote(url), ": ", problem));
}

// Whitespace, control characters, non-ASCII bytes and backslashes (which
// WHATWG URL parsers read as "/") are never part of a replica URL.
absl::Status CheckBytes(absl::string_view url) {
  for (size_t i = 0; i < url.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(url[i]);
    absl::string_view what;
    if (c == ' ' || c == '\t') {
      what = "whitespace";
    } else if (c < 0x20 || c == 0x7f) {
      what = "a control character";
    } else if (c >= 0x80) {
      what = "a non-ASCII byte";
    } else if (c == '\\') {
      what = "a backslash";
    } else {
      continue;
    }
    return UrlError(url, absl::StrCat("contains ", what, " at byte ", i));
  }
  if (url.find('#') != absl::string_view::npos) {
    return UrlError(url, "fragment (\"#...\") is not allowed");
  }
  if (url.find('?') != absl::string_view::npos) {
    return UrlError(url, "query (\"?...\") is not allowed");
  }
  return absl::OkStatus();
}

// "[2001:db8::1]" -> "[2001:db8::1]" in canonical (RFC 5952) form, so that
// different spellings of one address compare equal.
absl::StatusOr<std::string> CanonicalIpv6(absl::string_view url,
                                          absl::string_view bracketed) {
  const std::string address(bracketed.substr(1, bracketed.size() - 2));
  in6_addr parsed;
  char text[INET6_ADDRSTRLEN];
  if (inet_pton(AF_INET6, address.c_str(), &parsed) != 1 ||
      inet_ntop(AF_INET6, &parsed, text, sizeof(text)) == nullptr) {
    return UrlError(url, absl::StrCat("host ", Quote(bracketed),
                                      " is not a valid IPv6 literal"));
  }
  return absl::StrCat("[", text, "]");
}

// A DNS name or IPv4 address: letters, digits, "-", "_" and non-empty
// dot-separated labels. Returns it in lower case.
absl::StatusOr<std::string> CheckRegName(absl::string_view url,
                                         absl::string_view host) {
  for (const char c : host) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') {
      return UrlError(url, absl::StrCat("host ", Quote(host),
                                        " contains invalid character ",
                                        Quote(absl::string_view(&c, 1))));
    }
  }
  for (const absl::string_view label : absl::StrSplit(host, '.')) {
    if (label.empty()) {
      return UrlError(
          url, absl::StrCat("host ", Quote(host), " has an empty label"));
    }
  }
  return absl::AsciiStrToLower(host);
}

absl::StatusOr<int> ParsePort(absl::string_view url, absl::string_view text) {
  if (text.empty()) return UrlError(url, "port is empty");
  for (const char c : text) {
    if (!absl::ascii_isdigit(c)) {
      return UrlError(
          url, absl::StrCat("port ", Quote(text), " is not a decimal number"));
    }
  }
  int port = 0;
  if (text.size() > 5 || !absl::SimpleAtoi(text, &port) || port < 1 ||
      port > kMaxPort) {
    return UrlError(
        url, absl::StrCat("port ", text, " is out of range (want 1..65535)"));
  }
  return port;
}

// Splits "host", "host:port", "[v6]" or "[v6]:port" into `replica`.
absl::Status ParseAuthority(absl::string_view url, absl::string_view authority,
                            ReplicaUrl& replica) {
  if (authority.find('@') != absl::string_view::npos) {
    return UrlError(url, "userinfo (\"user@\") is not allowed");
  }
  absl::string_view host = authority;
  absl::string_view after_host;
  if (absl::StartsWith(authority, "[")) {
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) {
      return UrlError(url, "IPv6 literal is missing its closing \"]\"");
    }
    host = authority.substr(0, close + 1);
    after_host = authority.substr(close + 1);
    absl::StatusOr<std::string> canonical = CanonicalIpv6(url, host);
    if (!canonical.ok()) return canonical.status();
    replica.host = *std::move(canonical);
  } else {
    host = authority.substr(0, authority.find(':'));
    after_host = authority.substr(host.size());
    if (host.empty()) return UrlError(url, "host is required");
    absl::StatusOr<std::string> name = CheckRegName(url, host);
    if (!name.ok()) return name.status();
    replica.host = *std::move(name);
  }
  if (after_host.empty()) {
    replica.port = replica.scheme == "https" ? 443 : 80;
    return absl::OkStatus();
  }
  if (after_host[0] != ':') {
    return UrlError(url, absl::StrCat("unexpected ", Quote(after_host),
                                      " after host ", Quote(host)));
  }
  absl::StatusOr<int> port = ParsePort(url, after_host.substr(1));
  if (!port.ok()) return port.status();
  replica.port = *port;
  return absl::OkStatus();
}

bool IsPathChar(char c) {
  // RFC 3986 pchar (minus pct-encoded, handled by the caller) plus "/".
  return absl::ascii_isalnum(c) ||
         absl::string_view("-._~!$&'()*+,;=:@/").find(c) !=
             absl::string_view::npos;
}

// "" or an origin-form path; returns it without trailing slashes.
absl::StatusOr<std::string> ParseBasePath(absl::string_view url,
                                          absl::string_view path) {
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%') {
      if (i + 2 >= path.size() || !absl::ascii_isxdigit(path[i + 1]) ||
          !absl::ascii_isxdigit(path[i + 2])) {
        return UrlError(url,
                        absl::StrCat("path ", Quote(path),
                                     " has a malformed %-escape at byte ", i));
      }
    } else if (!IsPathChar(path[i])) {
      return UrlError(url, absl::StrCat("path ", Quote(path),
                                        " contains invalid character ",
                                        Quote(path.substr(i, 1))));
    }
  }
  for (const absl::string_view segment : absl::StrSplit(path, '/')) {
    if (segment == "." || segment == "..") {
      return UrlError(url, absl::StrCat("path ", Quote(path),
                                        " has a \".\" or \"..\" segment"));
    }
  }
  while (absl::EndsWith(path, "/")) path.remove_suffix(1);
  return std::string(path);
}

}  // namespace

absl::StatusOr<ReplicaUrl> ParseReplicaUrl(absl::string_view url) {
  if (absl::Status bytes = CheckBytes(url); !bytes.ok()) return bytes;
  const size_t scheme_end = url.find("://");
  if (scheme_end == absl::string_view::npos || scheme_end == 0) {
    return UrlError(url, "missing scheme (want http:// or https://)");
  }
  ReplicaUrl replica;
  replica.configured = std::string(url);
  const absl::string_view scheme = url.substr(0, scheme_end);
  replica.scheme = absl::AsciiStrToLower(scheme);
  if (replica.scheme == "dns") {
    replica.scheme = "http";
    replica.resolve = true;
  }
  if (replica.scheme != "http" && replica.scheme != "https") {
    return UrlError(url, absl::StrCat("unsupported scheme ", Quote(scheme),
                                      " (want http or https)"));
  }
  const absl::string_view rest = url.substr(scheme_end + 3);
  const size_t path_start = std::min(rest.find('/'), rest.size());
  if (absl::Status authority =
          ParseAuthority(url, rest.substr(0, path_start), replica);
      !authority.ok()) {
    return authority;
  }
  absl::StatusOr<std::string> base_path =
      ParseBasePath(url, rest.substr(path_start));
  if (!base_path.ok()) return base_path.status();
  replica.base_path = *std::move(base_path);
  replica.origin =
      absl::StrCat(replica.scheme, "://", replica.host, ":", replica.port);
  return replica;
}

absl::StatusOr<std::vector<ReplicaUrl>> ParseReplicaList(
    absl::string_view comma_list) {
  if (absl::StripAsciiWhitespace(comma_list).empty()) {
    return absl::InvalidArgumentError("backend list is empty");
  }
  const std::vector<absl::string_view> entries =
      absl::StrSplit(comma_list, ',');
  std::vector<ReplicaUrl> replicas;
  replicas.reserve(entries.size());
  // origin + base_path -> index in `replicas`.
  absl::flat_hash_map<std::string, size_t> seen;
  for (size_t i = 0; i < entries.size(); ++i) {
    const absl::string_view entry = absl::StripAsciiWhitespace(entries[i]);
    if (entry.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "backend list entry ", i + 1, " of ", entries.size(), " is empty"));
    }
    absl::StatusOr<ReplicaUrl> replica = ParseReplicaUrl(entry);
    if (!replica.ok()) return replica.status();
    std::string identity = absl::StrCat(replica->origin, replica->base_path);
    const auto [it, inserted] = seen.try_emplace(identity, replicas.size());
    if (!inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat("backends ", Quote(replicas[it->second].configured),
                       " and ", Quote(replica->configured),
                       " are the same replica (", identity, ")"));
    }
    replicas.push_back(*std::move(replica));
  }
  return replicas;
}

std::string BuildAttemptUrl(const ReplicaUrl& replica,
                            absl::string_view target) {
  return absl::StrCat(replica.origin, replica.base_path, target);
}

}  // namespace tailgate::hygiene

namespace tailgate::hygiene {

std::string ReplicaLabel(const ReplicaUrl& replica) {
  if (replica.address.empty()) return replica.configured;
  return absl::StrCat(replica.host, "@", replica.address);
}

}  // namespace tailgate::hygiene
