// Health checks and reflection queries for tests, without health.proto or
// reflection.proto: Debian ships neither, and a binary that links
// libgrpc++_reflection cannot also carry its own copy of reflection.proto.
// The few messages involved are encoded and decoded by hand.
//
// Thread safety: free functions; safe from any thread.

#ifndef TAILGATE_SERVER_TESTING_RAW_GRPC_H_
#define TAILGATE_SERVER_TESTING_RAW_GRPC_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tailgate::server::testing {

// grpc.health.v1.HealthCheckResponse.ServingStatus values.
inline constexpr int kServing = 1;
inline constexpr int kNotServing = 2;

// grpc.health.v1.Health/Check for `service`: the serving status, or the
// call's error (NOT_FOUND for a service the health service does not know).
absl::StatusOr<int> HealthCheck(const std::shared_ptr<grpc::Channel>& channel,
                                const std::string& service);

// The service names listed by server reflection (v1alpha list_services).
absl::StatusOr<std::vector<std::string>> ReflectionListServices(
    const std::shared_ptr<grpc::Channel>& channel);

}  // namespace tailgate::server::testing

#endif  // TAILGATE_SERVER_TESTING_RAW_GRPC_H_
