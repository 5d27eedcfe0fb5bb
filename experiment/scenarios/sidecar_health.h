// CheckSidecarHealth: is a sidecar live and serving again after a load?
//
// Three looks, in this order: GET /healthz on its metrics listener (is
// the process live?), one read on a new gRPC connection (is a new caller
// served?), then reads on the session's existing connection, one at a
// time with a 1 s deadline and 250 ms apart, until one succeeds or
// `limit` passes (how long until the caller that sent the load is served
// again?).
//
// Thread safety: blocks the calling thread; uses the session's client.
// REQUIRES: curl_global_init has been called.

#ifndef TAILGATE_EXPERIMENT_SCENARIOS_SIDECAR_HEALTH_H_
#define TAILGATE_EXPERIMENT_SCENARIOS_SIDECAR_HEALTH_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "experiment/scenarios/sidecar_session.h"

namespace tailgate::experiment {

struct SidecarHealth {
  long healthz_status = 0;  // 0: no HTTP answer
  // Empty: the read on a new connection was ok; else what went wrong.
  std::string new_channel_failure;
  // From the start of the check to the first ok read on the existing
  // connection; none within the limit.
  std::optional<absl::Duration> recovery;
  int64_t probe_reads = 0;          // reads tried on the existing connection
  std::string first_probe_failure;  // empty when the first probe was ok

  // Live, and serving the loaded connection again within the limit. (A
  // failed read on a new connection is reported, not held against it: it
  // is one look at one moment.)
  bool Healthy() const { return healthz_status == 200 && recovery.has_value(); }
};

SidecarHealth CheckSidecarHealth(SidecarSession& session, absl::Duration limit);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_SCENARIOS_SIDECAR_HEALTH_H_
