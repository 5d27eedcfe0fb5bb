// Starting the gRPC listeners (--listen for HedgedRead, --admin for Admin).
//
// Every server started here also carries the default health service
// (grpc.health.v1.Health) and server reflection in both versions: the
// library's v1alpha, enabled process-wide on first use, and v1
// (server/grpc/reflection_v1.h). The sidecar accepts connections itself
// (GrpcAcceptor) and hands them to the server: it bounds how many are open,
// and rests instead of failing for good when accept() runs out of
// descriptors. Binding is exclusive (no SO_REUSEPORT), so an address already
// in use fails start-up instead of silently sharing the port with another
// process.
//
// Thread safety: StartGrpcServer and SetReadServing are safe from any
// thread.

#ifndef TAILGATE_SERVER_GRPC_GRPC_SERVER_H_
#define TAILGATE_SERVER_GRPC_GRPC_SERVER_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>

#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/grpc/grpc_acceptor.h"
#include "server/net/listen_address.h"

namespace tailgate::server {

// Destroying it stops accepting, then shuts the server down at once: calls
// still open are cancelled, and the destructor returns once each has
// completed (a read's completion needs the engine, which must still run).
struct GrpcListener {
  GrpcListener() = default;
  GrpcListener(GrpcListener&&) = default;
  GrpcListener& operator=(GrpcListener&&) = default;
  ~GrpcListener();

  std::unique_ptr<grpc::Server> server;
  ListenAddress address;  // as bound: the real port when 0 was asked for
  // Accepts for `server`; declared last, so destroyed (no more connections)
  // before the server.
  std::unique_ptr<GrpcAcceptor> acceptor;
};

// The largest request message a listener accepts: a ReadRequest at every
// hygiene limit (8 KiB target, 32 KiB of headers) with room to spare.
// Larger messages fail with RESOURCE_EXHAUSTED.
inline constexpr int kMaxRequestMessageBytes = 64 * 1024;
// The largest request metadata (gRPC's own headers: the read descriptor
// is in the message).
inline constexpr int kMaxRequestMetadataBytes = 16 * 1024;

// Threads gRPC may start for synchronous handlers (a quota's SetMaxThreads).
inline constexpr int kMaxGrpcSyncThreads = 8;

// What every listener bounds, whatever the client sends. Besides these, a
// listener accepts only uncompressed requests (a compressed one fails with
// UNIMPLEMENTED before it is inflated).
struct GrpcServerLimits {
  // > 0: HTTP/2 MAX_CONCURRENT_STREAMS; 0 leaves gRPC's default (no limit).
  int max_streams_per_connection = 0;
  // Client connections open at once; one more is closed at accept.
  int max_connections = 1024;
  // accept() failed; the listener rests for a second (GrpcAcceptor).
  AcceptBackoff::Report accept_failed;
  // A connection was closed at accept: `max_connections` were open.
  std::function<void(uint64_t refused)> refused;
  int max_receive_message_bytes = kMaxRequestMessageBytes;
  // Not null: the memory (connection buffers, partly received messages and
  // metadata, call state) and synchronous-handler threads gRPC may use, shared
  // by every listener given the same quota. Under memory pressure gRPC resets
  // the streams holding the most (RST_STREAM ENHANCE_YOUR_CALM). Must
  // outlive the servers.
  grpc::ResourceQuota* quota = nullptr;
};

// A server with `services`, health and reflection, and no listener: it
// serves the connections handed to it (grpc::AddInsecureChannelFromFd).
// max_connections, accept_failed and refused are not used.
// REQUIRES: each service outlives the returned server.
absl::StatusOr<std::unique_ptr<grpc::Server>> BuildGrpcServer(
    absl::Span<grpc::Service* const> services,
    const GrpcServerLimits& limits = {});

// The same, fed by a GrpcAcceptor listening on `address`.
// REQUIRES: each service outlives the returned server.
absl::StatusOr<GrpcListener> StartGrpcServer(
    const ListenAddress& address, absl::Span<grpc::Service* const> services,
    const GrpcServerLimits& limits = {});

// Health status of the whole server ("") and of tailgate.v1.HedgedRead:
// SERVING, or NOT_SERVING while draining.
void SetReadServing(grpc::Server& server, bool serving);

// Health status of tailgate.v1.Admin: SERVING for as long as the server
// runs (the Admin service answers while the sidecar drains, too).
void SetAdminServing(grpc::Server& server);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_GRPC_GRPC_SERVER_H_
