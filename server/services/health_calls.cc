#include "server/services/health_calls.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "proto/grpc/health/v1/health.pb.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"

namespace tailgate::server::services {
namespace {

namespace health = ::grpc::health::v1;

// As the gRPC library's default health service.
constexpr size_t kMaxServiceNameBytes = 200;

// The service a request names, if it parses and the name is not too long.
std::optional<std::string> ServiceNamed(absl::string_view request) {
  health::HealthCheckRequest parsed;
  if (!parsed.ParseFromArray(request.data(), static_cast<int>(request.size())) ||
      parsed.service().size() > kMaxServiceNameBytes) {
    return std::nullopt;
  }
  return std::move(*parsed.mutable_service());
}

bool Known(absl::string_view service) {
  return service.empty() || service == v1::HedgedRead::service_full_name();
}

}  // namespace

absl::StatusOr<std::string> AnswerHealthCheck(absl::string_view request,
                                              bool serving) {
  const std::optional<std::string> service = ServiceNamed(request);
  if (!service.has_value()) {
    return absl::InvalidArgumentError("could not parse request");
  }
  if (!Known(*service)) return absl::NotFoundError("service name unknown");
  return HealthResponse(StatusOf(serving));
}

absl::StatusOr<HealthWatchStart> StartHealthWatch(absl::string_view request,
                                                  bool serving) {
  const std::optional<std::string> service = ServiceNamed(request);
  if (!service.has_value()) {
    return absl::InternalError("could not parse request");
  }
  if (!Known(*service)) return HealthWatchStart{};
  return HealthWatchStart{.first = StatusOf(serving), .follows_serving = true};
}

std::string HealthResponse(HealthStatus status) {
  health::HealthCheckResponse response;
  response.set_status(
      static_cast<health::HealthCheckResponse::ServingStatus>(status));
  return response.SerializeAsString();
}

}  // namespace tailgate::server::services
