// Loopback socket helpers shared by the test servers in this package.
//
// Thread safety: plain functions; safe from any thread.

#ifndef TAILGATE_TESTS_REPLICA_LOOPBACK_H_
#define TAILGATE_TESTS_REPLICA_LOOPBACK_H_

#include <event2/event.h>
#include <event2/listener.h>
#include <netinet/in.h>

#include "absl/status/statusor.h"

namespace tailgate::testing {

// 127.0.0.1:`port`, or `ip` (an IPv4 loopback address such as
// "127.0.0.3": Linux answers on all of 127.0.0.0/8).
sockaddr_in LoopbackAddress(int port, const char* ip = "127.0.0.1");

// The local port a socket is bound to.
absl::StatusOr<int> LocalPort(int fd);

// Listens on `ip`:`port` (0: a free port; `ip` a loopback IPv4 address)
// with SO_REUSEADDR and close-on-exec, for sockets it accepts too. The
// listener owns the socket. `callback` may be null until
// evconnlistener_set_cb.
absl::StatusOr<evconnlistener*> ListenOnLoopback(
    event_base* base, int port, evconnlistener_cb callback, void* arg,
    const char* ip = "127.0.0.1");

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_REPLICA_LOOPBACK_H_
