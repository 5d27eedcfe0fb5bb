// GrpcAcceptor: accepts the connections of a gRPC listener itself and hands
// each to the grpc::Server (grpc::AddInsecureChannelFromFd), so that the
// sidecar, not the linked gRPC, decides what happens at accept time:
//
//   - at most `max_connections` connections are open at once; one more is
//     closed at once and counted (refused());
//   - when accept() fails (out of descriptors), the listener rests for a
//     second (AcceptBackoff) and serves again once descriptors free up.
//     gRPC 1.51's own listener stops for good instead.
//
// Connections are counted from accept until gRPC closes them; a closed one
// is noticed when its descriptor no longer names the same socket (fstat's
// inode), checked whenever the count reaches the limit.
//
// Thread safety: the accept loop runs on a thread of its own; refused() and
// the destructor may be called from any thread. Destroy the acceptor before
// shutting the server down: it stops accepting and joins its thread.
#ifndef TAILGATE_SERVER_GRPC_GRPC_ACCEPTOR_H_
#define TAILGATE_SERVER_GRPC_GRPC_ACCEPTOR_H_

#include <sys/socket.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "server/net/accept_backoff.h"
#include "server/net/listen_address.h"

namespace grpc {
class Server;
}
struct event;
struct event_base;
struct evconnlistener;

namespace tailgate::server {

class GrpcAcceptor {
 public:
  struct Options {
    int max_connections = 1024;
    AcceptBackoff::Report accept_failed;
    // A connection closed because `max_connections` are open (rate-limited
    // by the caller if it logs).
    std::function<void(uint64_t refused)> refused;
  };

  // Listens on `address` and feeds `server`, which must have been built
  // without listening ports and must outlive the acceptor.
  static absl::StatusOr<std::unique_ptr<GrpcAcceptor>> Start(
      const ListenAddress& address, grpc::Server* server, Options options);
  ~GrpcAcceptor();
  GrpcAcceptor(const GrpcAcceptor&) = delete;
  GrpcAcceptor& operator=(const GrpcAcceptor&) = delete;

  // The bound address, with the real port when 0 was asked for.
  const ListenAddress& address() const { return address_; }
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  GrpcAcceptor(grpc::Server* server, Options options)
      : server_(server), options_(std::move(options)) {}
  static void OnAccept(evconnlistener* listener, int fd, sockaddr* address,
                       int length, void* self) noexcept;
  static void OnStop(int fd, short what, void* base) noexcept;
  void Accept(int fd, bool tcp);
  // Drops the connections gRPC has closed; returns how many are open.
  size_t Sweep();

  grpc::Server* const server_;
  const Options options_;
  ListenAddress address_;
  event_base* base_ = nullptr;
  evconnlistener* listener_ = nullptr;
  event* stop_ = nullptr;
  std::unique_ptr<AcceptBackoff> backoff_;
  std::atomic<uint64_t> refused_{0};
  // Accept thread only: open connections, descriptor -> socket inode.
  std::unordered_map<int, ino_t> open_;
  std::thread thread_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_GRPC_GRPC_ACCEPTOR_H_
