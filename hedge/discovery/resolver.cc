#include "hedge/discovery/resolver.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tailgate::hedge::discovery {
namespace {

// Sorted and distinct; NOT_FOUND when empty.
absl::StatusOr<std::vector<std::string>> Answer(
    absl::string_view name, std::vector<std::string> addresses) {
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()),
                  addresses.end());
  if (addresses.empty()) {
    return absl::NotFoundError(absl::StrCat("no address for \"", name, "\""));
  }
  return addresses;
}

// "a.b.c.d" or "[v6]" for a textual IPv4 or IPv6 address; "" otherwise.
std::string Canonical(absl::string_view text) {
  const std::string address(text);
  in_addr v4;
  in6_addr v6;
  char out[INET6_ADDRSTRLEN] = {};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    inet_ntop(AF_INET, &v4, out, sizeof(out));
    return out;
  }
  if (inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
    inet_ntop(AF_INET6, &v6, out, sizeof(out));
    return absl::StrCat("[", out, "]");
  }
  return "";
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SystemResolver::Resolve(
    absl::string_view name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string host(name);
  const int error = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (error == EAI_NONAME || error == EAI_NODATA) {
    return absl::NotFoundError(absl::StrCat("no address for \"", name, "\""));
  }
  if (error != 0) {
    return absl::UnavailableError(absl::StrCat(
        "resolving \"", name, "\": ", gai_strerror(error)));
  }
  std::vector<std::string> addresses;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr,
                text, sizeof(text));
      addresses.push_back(text);
    } else if (a->ai_family == AF_INET6) {
      inet_ntop(AF_INET6,
                &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr, text,
                sizeof(text));
      addresses.push_back(absl::StrCat("[", text, "]"));
    }
  }
  freeaddrinfo(found);
  return Answer(name, std::move(addresses));
}

absl::StatusOr<std::vector<std::string>> HostsFileResolver::Resolve(
    absl::string_view name) {
  std::ifstream in(path_);
  if (!in.is_open()) {
    return absl::UnavailableError(
        absl::StrCat("cannot read hosts file \"", path_, "\""));
  }
  std::vector<std::string> addresses;
  std::string line;
  while (std::getline(in, line)) {
    const absl::string_view content =
        absl::string_view(line).substr(0, line.find('#'));
    const std::vector<absl::string_view> words =
        absl::StrSplit(content, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (words.size() < 2) continue;
    const std::string address = Canonical(words[0]);
    if (address.empty()) continue;
    for (size_t i = 1; i < words.size(); ++i) {
      if (absl::EqualsIgnoreCase(words[i], name)) {
        addresses.push_back(address);
        break;
      }
    }
  }
  return Answer(name, std::move(addresses));
}

}  // namespace tailgate::hedge::discovery
