// AdminClient: the sidecar's operator interface (tailgate.v1.Admin).
//
// The Admin service listens on its own address (the sidecar's --admin flag,
// 127.0.0.1:9090 by default), apart from the reads, so it is a client of its
// own: applications that only read never hold admin access.
//
// Example:
//   absl::StatusOr<std::unique_ptr<tailgate::AdminClient>> admin =
//       tailgate::AdminClient::Connect("127.0.0.1:9090");
//   absl::StatusOr<tailgate::SidecarStats> stats = (*admin)->GetStats();
//   if (stats.ok()) printf("amplification %.3f\n", stats->amplification);
//
// Thread safety: safe from any thread, concurrently. Both calls block.

#ifndef TAILGATE_CLIENT_ADMIN_CLIENT_H_
#define TAILGATE_CLIENT_ADMIN_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/client.h"

namespace tailgate {

enum class CircuitState { kUnspecified, kClosed, kOpen, kHalfOpen };

// "closed", "open", "half-open" ("unspecified" for kUnspecified).
absl::string_view CircuitStateName(CircuitState state);

// One replica's counters and circuit (tailgate.v1.ReplicaStats).
struct ReplicaStats {
  std::string url;
  CircuitState circuit = CircuitState::kUnspecified;
  uint64_t generation = 0;
  uint64_t attempts = 0;
  uint64_t failures = 0;
  int64_t in_flight = 0;
};

// Totals since the sidecar started (tailgate.v1.GetStatsResponse).
struct SidecarStats {
  uint64_t requests = 0;
  uint64_t rejected = 0;
  uint64_t attempts = 0;
  uint64_t hedges = 0;
  uint64_t hedge_wins = 0;
  uint64_t hedges_skipped = 0;  // extra attempts wanted but not launched
  uint64_t timeouts = 0;
  uint64_t cancelled = 0;  // reads the caller cancelled
  uint64_t backend_failures = 0;
  int64_t in_flight = 0;
  double amplification = 0;
  double hedge_credits = 0;
  std::vector<ReplicaStats> replicas;
};

// The Prometheus text exposition (tailgate.v1.GetMetricsResponse).
struct MetricsText {
  std::string content_type;
  std::string text;
};

class AdminClient {
 public:
  // Opens an insecure channel to the sidecar's Admin listener; `target` and
  // `options` as for Client::Connect. Each call's deadline is
  // options.default_deadline.
  static absl::StatusOr<std::unique_ptr<AdminClient>> Connect(
      absl::string_view target, const ClientOptions& options = {});

  virtual ~AdminClient() = default;

  virtual absl::StatusOr<SidecarStats> GetStats() = 0;
  virtual absl::StatusOr<MetricsText> GetMetrics() = 0;
};

}  // namespace tailgate

#endif  // TAILGATE_CLIENT_ADMIN_CLIENT_H_
