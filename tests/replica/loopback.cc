#include "tests/replica/loopback.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tailgate::testing {

sockaddr_in LoopbackAddress(int port, const char* ip) {
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, ip, &address.sin_addr) != 1) {
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  }
  return address;
}

absl::StatusOr<int> LocalPort(int fd) {
  sockaddr_in bound = {};
  socklen_t length = sizeof(bound);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    return absl::InternalError(
        absl::StrCat("getsockname: ", std::strerror(errno)));
  }
  return ntohs(bound.sin_port);
}

absl::StatusOr<evconnlistener*> ListenOnLoopback(event_base* base, int port,
                                                 evconnlistener_cb callback,
                                                 void* arg, const char* ip) {
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("bad port ", port));
  }
  const sockaddr_in address = LoopbackAddress(port, ip);
  evconnlistener* listener = evconnlistener_new_bind(
      base, callback, arg,
      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
      SOMAXCONN, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  if (listener == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", ip, ":", port, ": ", std::strerror(errno)));
  }
  return listener;
}

}  // namespace tailgate::testing
