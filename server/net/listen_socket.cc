#include "server/net/listen_socket.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tailgate::server {
namespace {

absl::Status CannotListen(const ListenAddress& address) {
  return absl::UnavailableError(
      absl::StrCat("cannot listen on ", address.ToString()));
}

absl::StatusOr<int> ListenUnix(const ListenAddress& address) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (address.path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unix socket path too long: ", address.path));
  }
  std::memcpy(addr.sun_path, address.path.data(), address.path.size());
  struct stat st {};
  if (lstat(address.path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
    unlink(address.path.c_str());
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return CannotListen(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return CannotListen(address);
  }
  // Before listen(): until then a connect is refused whatever the file's
  // mode, so no client gets in under the umask's bits.
  if (chmod(address.path.c_str(), static_cast<mode_t>(address.unix_mode)) !=
      0) {
    const int error = errno;
    close(fd);
    unlink(address.path.c_str());
    return absl::UnavailableError(
        absl::StrFormat("cannot set mode %04o on %s: %s", address.unix_mode,
                        address.ToString(), std::strerror(error)));
  }
  if (listen(fd, kListenBacklog) != 0) {
    close(fd);
    return CannotListen(address);
  }
  return fd;
}

absl::StatusOr<int> ListenTcp(const ListenAddress& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = absl::StrCat(address.port);
  if (getaddrinfo(address.host.empty() ? nullptr : address.host.c_str(),
                  port.c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    return CannotListen(address);
  }
  int fd = -1;
  for (addrinfo* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                ai->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
        listen(fd, kListenBacklog) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) return CannotListen(address);
  return fd;
}

}  // namespace

absl::StatusOr<int> OpenListeningSocket(const ListenAddress& address) {
  return address.is_unix ? ListenUnix(address) : ListenTcp(address);
}

absl::StatusOr<int> LocalPort(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof(storage);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
    return absl::InternalError("getsockname failed on a listener");
  }
  if (storage.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port);
  }
  return ntohs(reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
}

}  // namespace tailgate::server
