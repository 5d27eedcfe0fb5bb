#include "server/grpc/grpc_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/grpc/grpc_acceptor.h"
#include "server/grpc/reflection_v1.h"

namespace tailgate::server {
namespace {

// Both settings are process-wide and apply to builders created afterwards.
void EnableHealthAndReflection() {
  static std::once_flag once;
  std::call_once(once, [] {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<grpc::Server>> BuildGrpcServer(
    absl::Span<grpc::Service* const> services, const GrpcServerLimits& limits) {
  EnableHealthAndReflection();
  grpc::ServerBuilder builder;
  AddReflectionV1(builder);
  if (limits.max_streams_per_connection > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                               limits.max_streams_per_connection);
  }
  builder.SetMaxReceiveMessageSize(limits.max_receive_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE,
                             kMaxRequestMetadataBytes);
  // The linked gRPC inflates a compressed message before it checks its
  // size: a 1 MB gzip bomb became 1 GiB. Identity only, refused up front.
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_DEFLATE, false);
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_GZIP, false);
  if (limits.quota != nullptr) builder.SetResourceQuota(*limits.quota);
  // No listening port: GrpcAcceptor hands the server its connections.
  for (grpc::Service* service : services) builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    return absl::InternalError("cannot start a gRPC server");
  }
  return server;
}

GrpcListener::~GrpcListener() {
  acceptor.reset();
  if (server != nullptr) server->Shutdown(absl::ToChronoTime(absl::Now()));
}

absl::StatusOr<GrpcListener> StartGrpcServer(
    const ListenAddress& address, absl::Span<grpc::Service* const> services,
    const GrpcServerLimits& limits) {
  absl::StatusOr<std::unique_ptr<grpc::Server>> server =
      BuildGrpcServer(services, limits);
  if (!server.ok()) return server.status();
  GrpcListener listener;
  listener.server = *std::move(server);
  absl::StatusOr<std::unique_ptr<GrpcAcceptor>> acceptor =
      GrpcAcceptor::Start(address, listener.server.get(),
                          {.max_connections = limits.max_connections,
                           .accept_failed = limits.accept_failed,
                           .refused = limits.refused});
  if (!acceptor.ok()) {
    listener.server->Shutdown();
    return acceptor.status();
  }
  listener.acceptor = *std::move(acceptor);
  listener.address = listener.acceptor->address();
  return listener;
}

void SetReadServing(grpc::Server& server, bool serving) {
  grpc::HealthCheckServiceInterface* health = server.GetHealthCheckService();
  health->SetServingStatus("", serving);
  health->SetServingStatus(v1::HedgedRead::service_full_name(), serving);
}

void SetAdminServing(grpc::Server& server) {
  server.GetHealthCheckService()->SetServingStatus(
      v1::Admin::service_full_name(), true);
}

}  // namespace tailgate::server
