// Starting the gRPC listeners (--listen for HedgedRead, --admin for Admin).
//
// Every server started here also carries the default health service
// (grpc.health.v1.Health) and server reflection in both versions: the
// library's v1alpha, enabled process-wide on first use, and v1
// (server/reflection_v1.h). Binding is exclusive: gRPC's SO_REUSEPORT is turned off, so
// an address already in use fails start-up instead of silently sharing the
// port with another process.
//
// Thread safety: StartGrpcServer and SetReadServing are safe from any
// thread.

#ifndef TAILGATE_SERVER_GRPC_SERVER_H_
#define TAILGATE_SERVER_GRPC_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/listen_address.h"

namespace tailgate::server {

struct GrpcListener {
  std::unique_ptr<grpc::Server> server;
  ListenAddress address;  // as bound: the real port when 0 was asked for
};

// REQUIRES: each service outlives the returned server.
// `max_streams_per_connection` > 0 sets HTTP/2 MAX_CONCURRENT_STREAMS;
// 0 leaves gRPC's default (no limit).
absl::StatusOr<GrpcListener> StartGrpcServer(
    const ListenAddress& address, absl::Span<grpc::Service* const> services,
    int max_streams_per_connection = 0);

// Health status of the whole server ("") and of tailgate.v1.HedgedRead:
// SERVING, or NOT_SERVING while draining.
void SetReadServing(grpc::Server& server, bool serving);

// Health status of tailgate.v1.Admin: SERVING for as long as the server
// runs (the Admin service answers while the sidecar drains, too).
void SetAdminServing(grpc::Server& server);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_GRPC_SERVER_H_
