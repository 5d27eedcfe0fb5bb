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
#include "absl/time/time.h"
#include "client/client.h"

namespace tailgate {

enum class CircuitState { kUnspecified, kClosed, kOpen, kHalfOpen };

// "closed", "open", "half-open" ("unspecified" for kUnspecified).
absl::string_view CircuitStateName(CircuitState state);

// A replica's health (tailgate.v1.ReplicaState): the circuit states under
// the names operators use.
enum class ReplicaState { kUnspecified, kServing, kEjected, kProbing };

// "serving", "ejected", "probing" ("unspecified" for kUnspecified).
absl::string_view ReplicaStateName(ReplicaState state);

// One replica's counters, circuit and health (tailgate.v1.ReplicaStats).
struct ReplicaStats {
  std::string url;
  CircuitState circuit = CircuitState::kUnspecified;
  uint64_t generation = 0;
  uint64_t attempts = 0;
  uint64_t failures = 0;
  int64_t in_flight = 0;
  ReplicaState state = ReplicaState::kUnspecified;
  // Ejections since start, by reason.
  uint64_t ejections_consecutive = 0;
  uint64_t ejections_failure_rate = 0;
  uint64_t ejections_probe = 0;
  uint64_t give_ups = 0;  // its primaries given up at the give-up point
  uint64_t probes_passed = 0;
  uint64_t probes_failed = 0;
  double weight = 0;           // its share of reads now, 0 to 1
  double cost_seconds = 0;     // what choosing it costs now
  absl::Duration latency;      // its recent latency
  double failure_rate = 0;     // of its outcomes in the ejection window
  absl::Duration ejected_for;  // the ejection in force, or the last one
  // Retry-After back-off: in force now, and for how much longer.
  bool backed_off = false;
  absl::Duration back_off_remaining;
  // Overload answers since start, by status.
  uint64_t overload_answers_429 = 0;
  uint64_t overload_answers_503 = 0;
  // Serving, but kept in by the ejection cap: a trickle of primaries only.
  bool degraded = false;
};

// One replica set's give-up point (tailgate.v1.UpstreamStats).
struct UpstreamStats {
  std::string name;              // "" for the default set
  absl::Duration give_up_after;  // zero when giving up is off
  bool give_up_learned = false;  // else give_up_after is its maximum
  uint64_t give_up_fallbacks = 0;
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
  std::vector<UpstreamStats> upstreams;  // in configuration order
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
