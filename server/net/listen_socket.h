// Listening sockets the sidecar opens itself (the gRPC acceptor, the HTTP
// door), and the port a bound socket got.
//
// Thread-compatible: plain functions.
#ifndef TAILGATE_SERVER_NET_LISTEN_SOCKET_H_
#define TAILGATE_SERVER_NET_LISTEN_SOCKET_H_

#include "absl/status/statusor.h"
#include "server/net/listen_address.h"

namespace tailgate::server {

inline constexpr int kListenBacklog = 1024;

// A non-blocking, close-on-exec listening socket on `address`. TCP: with
// SO_REUSEADDR (restarts need not wait for TIME_WAIT) but not SO_REUSEPORT,
// so an address another process holds fails (UNAVAILABLE "cannot listen on
// ..."). Unix: a stale socket file at the path is replaced; a path too long
// is INVALID_ARGUMENT; the socket file gets `address.unix_mode` (whatever
// the umask) before it accepts any connection.
absl::StatusOr<int> OpenListeningSocket(const ListenAddress& address);

// The local port of a bound TCP socket.
absl::StatusOr<int> LocalPort(int fd);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_NET_LISTEN_SOCKET_H_
