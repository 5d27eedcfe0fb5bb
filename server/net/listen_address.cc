#include "server/net/listen_address.h"

#include <arpa/inet.h>
#include <sys/un.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tailgate::server {
namespace {

constexpr absl::string_view kUnixPrefix = "unix:";

bool IsIpv4(const std::string& host) {
  in_addr addr;
  return inet_pton(AF_INET, host.c_str(), &addr) == 1;
}

bool IsIpv6(const std::string& host) {
  in6_addr addr;
  return inet_pton(AF_INET6, host.c_str(), &addr) == 1;
}

// RFC 1123 host name: dot-separated labels of letters, digits and inner
// hyphens; the last label is not all digits (so "1.2.3.999" is no name).
bool IsHostName(absl::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  const absl::string_view last = host.substr(host.rfind('.') + 1);
  if (std::all_of(last.begin(), last.end(), absl::ascii_isdigit)) return false;
  size_t label = 0;
  for (size_t i = 0; i <= host.size(); ++i) {
    if (i == host.size() || host[i] == '.') {
      if (label == 0 || label > 63 || host[i - 1] == '-') return false;
      label = 0;
      continue;
    }
    const char c = host[i];
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-') {
      return false;
    }
    if (label == 0 && c == '-') return false;
    ++label;
  }
  return true;
}

absl::StatusOr<ListenAddress> ParseUnix(absl::string_view path) {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("unix socket path must be absolute, got \"", path, "\""));
  }
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unix socket path is longer than ",
                     sizeof(sockaddr_un{}.sun_path) - 1, " bytes"));
  }
  ListenAddress address;
  address.is_unix = true;
  address.path = std::string(path);
  return address;
}

absl::StatusOr<int> ParsePort(absl::string_view text) {
  int port = 0;
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(text, &port) || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port must be in [0, 65535], got \"", text, "\""));
  }
  return port;
}

}  // namespace

std::string ListenAddress::ToString() const {
  if (is_unix) return absl::StrCat(kUnixPrefix, path);
  if (absl::StrContains(host, ':')) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

ListenAddress ListenAddress::WithPort(int bound_port) const {
  ListenAddress bound = *this;
  if (!is_unix) bound.port = bound_port;
  return bound;
}

absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view text) {
  if (absl::StartsWith(text, kUnixPrefix)) {
    return ParseUnix(text.substr(kUnixPrefix.size()));
  }
  const size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "want host:port, [ipv6]:port or unix:/path, got \"", text, "\""));
  }
  absl::string_view host = text.substr(0, colon);
  absl::StatusOr<int> port = ParsePort(text.substr(colon + 1));
  if (!port.ok()) return port.status();

  ListenAddress address;
  address.port = *port;
  if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) {
    address.host = std::string(host.substr(1, host.size() - 2));
    if (!IsIpv6(address.host)) {
      return absl::InvalidArgumentError(
          absl::StrCat("not an IPv6 address: \"", address.host, "\""));
    }
    return address;
  }
  address.host = std::string(host);
  if (address.host.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("host is empty in \"", text, "\""));
  }
  if (IsIpv6(address.host)) {
    return absl::InvalidArgumentError(
        absl::StrCat("an IPv6 address needs brackets: \"[", address.host,
                     "]:", *port, "\""));
  }
  if (!IsIpv4(address.host) && !IsHostName(address.host)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an IPv4 address or host name: \"", host, "\""));
  }
  return address;
}

absl::StatusOr<int> ParseUnixSocketMode(absl::string_view text) {
  absl::string_view digits = text;
  if (absl::StartsWith(digits, "0o") || absl::StartsWith(digits, "0O")) {
    digits.remove_prefix(2);
  }
  const bool octal = !digits.empty() && digits.size() <= 4 &&
                     std::all_of(digits.begin(), digits.end(),
                                 [](char c) { return c >= '0' && c <= '7'; });
  if (!octal) {
    return absl::InvalidArgumentError(absl::StrCat(
        "want permission bits in octal (e.g. 0660), got \"", text, "\""));
  }
  int mode = 0;
  for (const char c : digits) mode = mode * 8 + (c - '0');
  if (mode > 0777) {
    return absl::InvalidArgumentError(absl::StrCat(
        "must be at most 0777 (no setuid, setgid or sticky bit), got \"", text,
        "\""));
  }
  if ((mode & 0600) != 0600) {
    return absl::InvalidArgumentError(absl::StrCat(
        "must give the owner read and write (0600 to 0777), got \"", text,
        "\""));
  }
  return mode;
}

}  // namespace tailgate::server
