#include "server/sidecar/connection_limits.h"

#include <algorithm>
#include <limits>

namespace tailgate::server {

ConnectionLimits SplitDescriptors(const ServerConfig& config,
                                  uint64_t file_limit) {
  constexpr int kAdminConnections = 64;
  // Replica connections (one per attempt, plus warm ones: --preconnect
  // per replica), and the process's own (listeners, event loops, libraries:
  // about 32 when idle, measured).
  ConnectionLimits limits;
  limits.reserved = config.engine.admission.max_attempts + 96;
  for (const hedge::UpstreamConfig& upstream : config.engine.upstreams) {
    limits.reserved += static_cast<int64_t>(upstream.preconnect) *
                       static_cast<int64_t>(upstream.replicas.size());
  }
  const int64_t left = file_limit == 0
                           ? std::numeric_limits<int64_t>::max()
                           : static_cast<int64_t>(file_limit) -
                                 limits.reserved - kAdminConnections;
  limits.admin = kAdminConnections;
  limits.http =
      config.http_listen.has_value()
          ? static_cast<int>(std::clamp<int64_t>(
                std::min<int64_t>(config.http_max_connections, left / 2), 1,
                config.http_max_connections))
          : 0;
  // With the read door, --listen and the door share what is left.
  const int64_t grpc_left = config.read_listen.has_value()
                                ? (left - limits.http) / 2
                                : left - limits.http;
  const auto bounded = [&config](int64_t connections) {
    return static_cast<int>(std::clamp<int64_t>(
        std::min<int64_t>(config.max_connections, connections), 1,
        config.max_connections));
  };
  limits.listen = bounded(grpc_left);
  limits.read = config.read_listen.has_value() ? bounded(grpc_left) : 0;
  return limits;
}

}  // namespace tailgate::server
