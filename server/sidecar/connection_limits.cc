#include "server/sidecar/connection_limits.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tailgate::server {
namespace {

constexpr int kAdminConnections = 64;
// Scrapes and liveness/readiness probes: a few at a time; the listener
// closes the connection idle longest to let a new one in.
constexpr int kMetricsConnections = 16;

// The read listeners' shares of `left` descriptors: the HTTP door takes up
// to half; with the read door, --listen and the door share the rest.
ConnectionLimits Shares(const ServerConfig& config, int64_t left) {
  ConnectionLimits limits;
  limits.http =
      config.http_listen.has_value()
          ? static_cast<int>(std::clamp<int64_t>(
                std::min<int64_t>(config.http_max_connections, left / 2), 0,
                config.http_max_connections))
          : 0;
  const int64_t grpc_left = config.read_listen.has_value()
                                ? (left - limits.http) / 2
                                : left - limits.http;
  const auto bounded = [&config](int64_t connections) {
    return static_cast<int>(std::clamp<int64_t>(
        std::min<int64_t>(config.max_connections, connections), 0,
        config.max_connections));
  };
  limits.listen = bounded(grpc_left);
  limits.read = config.read_listen.has_value() ? bounded(grpc_left) : 0;
  return limits;
}

// The fewest connections a read listener gets of `limits`, and whether
// every one reaches the floor (or its own maximum, if that is lower).
bool ReachesTheFloor(const ServerConfig& config, const ConnectionLimits& limits,
                     int& fewest) {
  fewest = std::numeric_limits<int>::max();
  bool reaches = true;
  const auto check = [&](int share, int maximum) {
    fewest = std::min(fewest, share);
    reaches &= share >= std::min(kMinClientConnections, maximum);
  };
  check(limits.listen, config.max_connections);
  if (config.read_listen.has_value()) {
    check(limits.read, config.max_connections);
  }
  if (config.http_listen.has_value()) {
    check(limits.http, config.http_max_connections);
  }
  return reaches;
}

}  // namespace

absl::StatusOr<ConnectionLimits> SplitDescriptors(const ServerConfig& config,
                                                  uint64_t file_limit) {
  // Replica connections (one per attempt, plus warm ones: --preconnect
  // per replica), and the process's own (listeners, event loops, libraries:
  // about 32 when idle, measured).
  int64_t reserved = config.engine.admission.max_attempts + 96;
  for (const hedge::UpstreamConfig& upstream : config.engine.upstreams) {
    reserved += static_cast<int64_t>(upstream.preconnect) *
                static_cast<int64_t>(upstream.replicas.size());
  }
  const int64_t left = file_limit == 0 ? std::numeric_limits<int64_t>::max()
                                       : static_cast<int64_t>(file_limit) -
                                             reserved - kAdminConnections -
                                             kMetricsConnections;
  ConnectionLimits limits = Shares(config, std::max<int64_t>(left, 0));
  limits.admin = kAdminConnections;
  limits.metrics = kMetricsConnections;
  limits.reserved = reserved;
  int fewest = 0;
  if (file_limit == 0 || ReachesTheFloor(config, limits, fewest)) {
    return limits;
  }
  // The least that would do: at most three listeners of the floor each,
  // the HTTP door taking half.
  int64_t enough = 0;
  int ignored = 0;
  while (!ReachesTheFloor(config, Shares(config, enough), ignored)) ++enough;
  return absl::FailedPreconditionError(absl::StrCat(
      "the descriptor limit (RLIMIT_NOFILE ", file_limit, ") leaves ", fewest,
      " client connections to a read listener once ", reserved,
      " are set aside for replica connections and the process "
      "(--max_attempts + 96, and --preconnect per replica) and ",
      kAdminConnections, " for --admin and ", kMetricsConnections,
      " for --metrics_listen; raise it to at least ",
      reserved + kAdminConnections + kMetricsConnections + enough,
      " (ulimit -n, or the container's nofile limit), or lower "
      "--max_attempts"));
}

}  // namespace tailgate::server
