// The replica-health part of /metrics (hedge/health/circuit_breaker.h,
// hedge/health/): each replica's state, ejections, probes, give-ups, share
// and cost, and each upstream's give-up point. Names in metrics.h.
//
// Thread safety: a pure function over a snapshot.

#ifndef TAILGATE_SERVER_OBSERVABILITY_HEALTH_METRICS_H_
#define TAILGATE_SERVER_OBSERVABILITY_HEALTH_METRICS_H_

#include <vector>

#include "hedge/transport/engine_snapshot.h"
#include "prometheus/metric_family.h"

namespace tailgate::server {

// Appends the health families of `engine` to `families`.
void AddReplicaHealth(const hedge::EngineSnapshot& engine,
                      std::vector<prometheus::MetricFamily>& families);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_OBSERVABILITY_HEALTH_METRICS_H_
