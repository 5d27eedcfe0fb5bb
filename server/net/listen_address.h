// ListenAddress: where a listener binds, parsed from a flag value.
//
// Accepted forms:
//   host:port      IPv4 literal ("127.0.0.1:8080", "0.0.0.0:0") or a host
//                  name ("localhost:8080")
//   [ipv6]:port    IPv6 literal in brackets ("[::1]:8080")
//   unix:/path     a Unix domain socket at an absolute path
// Port 0 asks the kernel for an ephemeral port; the listener reports the one
// it got (see WithPort). A unix socket carries the permission bits its file
// gets (--unix_socket_mode), which are not part of the address: two
// addresses at one path are equal whatever their modes.
//
// Thread safety: a plain value type.

#ifndef TAILGATE_SERVER_NET_LISTEN_ADDRESS_H_
#define TAILGATE_SERVER_NET_LISTEN_ADDRESS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tailgate::server {

// rw for the socket's owner and group: an app container of another uid in
// the pod's fsGroup can connect.
inline constexpr int kDefaultUnixSocketMode = 0660;

struct ListenAddress {
  bool is_unix = false;
  std::string host;  // TCP: without brackets ("::1")
  int port = 0;      // TCP: 0..65535
  std::string path;  // Unix: absolute path
  // Unix: the socket file's permission bits (ParseUnixSocketMode).
  int unix_mode = kDefaultUnixSocketMode;

  // "127.0.0.1:8080", "[::1]:0", "unix:/run/t.sock": the form gRPC's
  // AddListeningPort takes, and the form logged.
  std::string ToString() const;

  // The same address with `port` (for reporting an ephemeral port).
  ListenAddress WithPort(int bound_port) const;

  bool operator==(const ListenAddress& other) const {
    return is_unix == other.is_unix && host == other.host &&
           port == other.port && path == other.path;
  }
};

// Errors name what is wrong ("port must be in [0, 65535], got 70000"), not
// the flag; the caller prefixes the flag.
absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view text);

// Permission bits in octal ("0660", "660", "0o660"), from 0600 to 0777 and
// with the owner's read and write (the sidecar's own liveness probe
// connects to --listen). Errors name the problem, not the flag.
absl::StatusOr<int> ParseUnixSocketMode(absl::string_view text);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_NET_LISTEN_ADDRESS_H_
