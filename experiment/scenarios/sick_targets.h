// The sick scenario's targets: a fresh reader-facing process per case,
// started against the case's replicas with its default flags, with a way
// to read through it and a way to read its counters.
//
//   tailgate  the tailgate binary with only --backends and the port-0
//             listeners (tests/process's TailgateProcess); read over gRPC on
//             --listen; counters scraped from its Prometheus /metrics on
//             --metrics_listen: per replica tailgate_attempts_total
//             {kind="primary"}, all tailgate_attempts_total, and
//             tailgate_requests_total
//   gateway   the Go gateway (--peer_gateway) with only -backends, -listen
//             and -admin; read over HTTP/1.1; attempts and requests from
//             its JSON /metrics on -admin, and per replica the requests
//             the replica itself received (the gateway reports no
//             primaries)
//
// Example:
//   absl::StatusOr<std::unique_ptr<SickTargetProcess>> target =
//       StartSickTarget(SickTarget::kTailgate, setup, *replicas);
//   RunSteadyReads((*target)->reads(), options, progress);
//   absl::Status stopped = (*target)->Stop();
//
// Thread safety: ReadCounters is safe from any thread (a sampler's);
// reads() may be used from any thread until Stop; Start, Stop and the
// destructor from one thread. The destructor kills a process Stop did not
// stop.

#ifndef TAILGATE_EXPERIMENT_SCENARIOS_SICK_TARGETS_H_
#define TAILGATE_EXPERIMENT_SCENARIOS_SICK_TARGETS_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "experiment/load/steady_reads.h"
#include "experiment/replicas/sick_replicas.h"
#include "experiment/report/sick_timeline.h"

namespace tailgate::experiment {

enum class SickTarget { kTailgate, kGateway };

// "tailgate", "gateway".
const char* SickTargetName(SickTarget target);

struct SickTargetSetup {
  std::string tailgate_binary;
  std::string gateway_binary;  // empty: no gateway
  std::string work_dir;        // for the gateway's log
};

class SickTargetProcess {
 public:
  virtual ~SickTargetProcess() = default;

  virtual ReadTarget& reads() = 0;
  // Its totals since it started.
  virtual absl::StatusOr<TargetCounters> ReadCounters() = 0;
  // Stops it (SIGTERM): an error when it does not exit 0. REQUIRES: every
  // read started through reads() has ended.
  virtual absl::Status Stop() = 0;
};

// REQUIRES: `replicas` outlives the returned process.
absl::StatusOr<std::unique_ptr<SickTargetProcess>> StartSickTarget(
    SickTarget target, const SickTargetSetup& setup,
    const SickReplicaSet& replicas);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_SCENARIOS_SICK_TARGETS_H_
