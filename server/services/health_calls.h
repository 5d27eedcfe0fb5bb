// grpc.health.v1.Health as the sidecar answers it, free of any protocol:
// a serialized request in, a serialized answer or a status out. A door
// frames them (server/read_door serves them on --listen); the answers are
// those of the gRPC library's default health service, the reference on
// --listen_front=grpc.
//
// Two services are reported, "" (the whole sidecar) and
// tailgate.v1.HedgedRead, both SERVING or NOT_SERVING as the sidecar's
// ServingState says; any other name is unknown. A request that does not
// parse, or names a service longer than 200 bytes, is refused.
//
// Thread safety: pure functions.

#ifndef TAILGATE_SERVER_SERVICES_HEALTH_CALLS_H_
#define TAILGATE_SERVER_SERVICES_HEALTH_CALLS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tailgate::server::services {

// HealthCheckResponse.ServingStatus.
enum class HealthStatus {
  kServing = 1,
  kNotServing = 2,
  kServiceUnknown = 3,  // Watch only
};

// What a known service reports.
inline HealthStatus StatusOf(bool serving) {
  return serving ? HealthStatus::kServing : HealthStatus::kNotServing;
}

// Check: the serialized HealthCheckResponse. INVALID_ARGUMENT "could not
// parse request", or NOT_FOUND "service name unknown".
absl::StatusOr<std::string> AnswerHealthCheck(absl::string_view request,
                                              bool serving);

// Watch: what the stream sends first, and whether later changes of the
// serving state concern it (a known service). INTERNAL "could not parse
// request" (the library's code for Watch).
struct HealthWatchStart {
  HealthStatus first = HealthStatus::kServiceUnknown;
  bool follows_serving = false;
};
absl::StatusOr<HealthWatchStart> StartHealthWatch(absl::string_view request,
                                                  bool serving);

// The serialized HealthCheckResponse carrying `status`.
std::string HealthResponse(HealthStatus status);

}  // namespace tailgate::server::services

#endif  // TAILGATE_SERVER_SERVICES_HEALTH_CALLS_H_
