// gRPC server reflection, version 1 (grpc.reflection.v1.ServerReflection),
// next to the library's v1alpha service: current tools ask for v1 first.
//
// Answers are server/services/reflection_calls.h's (the loop front answers
// both versions with them too): descriptors come from the generated pool,
// so every service compiled into the binary can be described;
// list_services names the services registered on the server it is added
// to.
//
// Thread safety: AddReflectionV1 is called once per ServerBuilder, before
// BuildAndStart. The service it registers answers streams on gRPC's callback
// threads; its state is the service list, written once by BuildAndStart
// before any stream can start and only read afterwards.
#ifndef TAILGATE_SERVER_GRPC_REFLECTION_V1_H_
#define TAILGATE_SERVER_GRPC_REFLECTION_V1_H_

#include <grpcpp/server_builder.h>

namespace tailgate::server {

// Registers reflection v1 on `builder`'s server.
void AddReflectionV1(grpc::ServerBuilder& builder);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_GRPC_REFLECTION_V1_H_
