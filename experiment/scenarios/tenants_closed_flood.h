// The tenants scenario's closed-loop part: a well-behaved tenant "a" reads
// the seed's straggler pattern sequentially (A waits 40 ms for ids ending
// 0, B for ids ending 1, 2 ms otherwise), alone and then beside tenant "b"
// reading one id that is slow on A from kFloodThreads threads, each sending
// its next read when the previous answer is in. Two fresh sidecars with
// the same flags (--tenant_share=0.5, hedged at 5 ms with a budget of a
// quarter, --failure_threshold=1000 so that A's slowness opens no breaker).
// One line per mode, then a summary line with "a"'s p99 flooded over alone:
// the promise is that the flood costs "a" at most 10 % + 1 ms.
//
// Thread safety: runs on the calling thread and the flood's threads.

#ifndef TAILGATE_EXPERIMENT_SCENARIOS_TENANTS_CLOSED_FLOOD_H_
#define TAILGATE_EXPERIMENT_SCENARIOS_TENANTS_CLOSED_FLOOD_H_

#include <string>

#include "absl/status/status.h"
#include "experiment/config/experiment_config.h"

namespace tailgate::experiment {

absl::Status RunTenantsClosedFlood(const ExperimentConfig& config,
                                   const std::string& tailgate);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_SCENARIOS_TENANTS_CLOSED_FLOOD_H_
