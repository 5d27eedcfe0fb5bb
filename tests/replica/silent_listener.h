// Loopback endpoints that are not HTTP servers, for tests of connect and
// read failures:
//  - RefusingLoopbackPort: a port on 127.0.0.1 where nothing listens, so a
//    connect is refused at once, held for the rest of the process.
//  - UnusedLoopbackPort: a free port, for a server that binds it next.
//  - SilentListener: a TCP listener on 127.0.0.1 that accepts connections
//    and never reads from them or writes to them — a replica that is up but
//    stuck. (Unlike a socket that listens without accepting, the connection
//    is really accepted, and counted.)
//
// Thread safety: SilentListener's public member functions are safe from any
// thread; it runs its own event-loop thread. The destructor must not run on
// that thread.

#ifndef TAILGATE_TESTS_REPLICA_SILENT_LISTENER_H_
#define TAILGATE_TESTS_REPLICA_SILENT_LISTENER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tailgate::testing {

// A port on 127.0.0.1 that refuses connections until the process exits:
// its socket stays bound (without SO_REUSEADDR) but never listens, so no
// other test, in this process or one running beside it, can take the port,
// and no two calls return the same one.
absl::StatusOr<int> RefusingLoopbackPort();

// Binds 127.0.0.1:0, reads the port the kernel chose, and closes the socket,
// for a server (nginx, a healed endpoint) that must bind the port itself.
// Another process could take it first: bind it at once, and retry.
absl::StatusOr<int> UnusedLoopbackPort();

class SilentListener {
 public:
  // Listens on 127.0.0.1 at a free port.
  static absl::StatusOr<std::unique_ptr<SilentListener>> Start();

  ~SilentListener();  // stops the loop, closes every accepted connection
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;

  int port() const;
  std::string url() const;  // "http://127.0.0.1:PORT"

  int64_t connections_accepted() const;
  // Blocks until at least `n` connections were accepted or `timeout`
  // passes; returns whether they were.
  bool WaitForConnections(int64_t n, absl::Duration timeout) const;

 private:
  class Impl;
  explicit SilentListener(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_REPLICA_SILENT_LISTENER_H_
