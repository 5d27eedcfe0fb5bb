// gRPC server reflection as the sidecar answers it, free of any protocol:
// one ServerReflectionRequest in, its ServerReflectionResponse out.
// Versions v1 and v1alpha share their messages field for field, so one
// answer serves both: the gRPC library's v1 service (server/grpc's
// reflection_v1) and the loop front's streams of either version
// (server/read_door) are answered here.
//
// Descriptors come from protobuf's generated pool: every file compiled into
// the binary can be described, each answer carrying the file and, before
// it, every file it imports. Errors are answered in the response
// (error_response), with the codes and words of the gRPC library's
// v1alpha service: NOT_FOUND for a file, symbol, type or extension the
// pool lacks, UNIMPLEMENTED for a request that asks nothing.
//
// Thread safety: pure functions (the generated pool is thread-safe).

#ifndef TAILGATE_SERVER_SERVICES_REFLECTION_CALLS_H_
#define TAILGATE_SERVER_SERVICES_REFLECTION_CALLS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/grpc/reflection/v1/reflection.pb.h"

namespace tailgate::server::services {

// The answer to `request`; list_services lists `services`.
grpc::reflection::v1::ServerReflectionResponse AnswerReflection(
    const grpc::reflection::v1::ServerReflectionRequest& request,
    absl::Span<const std::string> services);

// The same, serialized. INVALID_ARGUMENT if `request` is not a serialized
// ServerReflectionRequest.
absl::StatusOr<std::string> AnswerReflection(
    absl::string_view request, absl::Span<const std::string> services);

}  // namespace tailgate::server::services

#endif  // TAILGATE_SERVER_SERVICES_REFLECTION_CALLS_H_
