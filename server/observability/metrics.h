// Metrics: the Prometheus text exposition of an EngineSnapshot plus the
// server's own rejection counters, built as prometheus-cpp MetricFamily
// values and rendered by prometheus::TextSerializer. The same text is
// served by HTTP GET /metrics and by Admin.GetMetrics.
//
// Names and labels:
//   tailgate_requests_total                   reads admitted
//   tailgate_rejected_total{reason}           invalid_argument,
//                                             unknown_upstream, draining,
//                                             overloaded, buffer_full,
//                                             tenant_share
//   tailgate_attempts_total{replica,kind}     kind: primary, hedge, fallback
//   tailgate_hedges_total, tailgate_hedge_wins_total, tailgate_timeouts_total
//   tailgate_backend_failures_total{replica}
//   tailgate_in_flight_requests, tailgate_in_flight_attempts
//   tailgate_amplification_ratio              attempts / requests
//   tailgate_hedge_credits
//   tailgate_circuit_state{replica}           0 closed (serving), 1 open
//                                             (ejected), 2 half-open
//                                             (probing)
//   tailgate_request_duration_seconds         histogram
//   tailgate_attempt_duration_seconds{replica} histogram
// and, beyond the design's list:
//   tailgate_hedges_skipped_total{reason}     no_replica, no_capacity,
//                                             no_budget, no_retry_budget,
//                                             no_tenant_budget
//   tailgate_upstream_retry_credits{upstream} failure-fallback credits now
//   tailgate_tenant_requests_total{tenant}, tailgate_tenant_rejected_total,
//   tailgate_tenant_hedges_total, tailgate_tenant_hedge_wins_total,
//   tailgate_tenant_in_flight_requests      by tenant: the first 16 names
//                                             seen, "" (none) and "other"
//   tailgate_cancelled_total                  reads cancelled by the caller
//   tailgate_circuit_transitions_total{replica}
//   tailgate_circuit_generation{replica}      the same as a gauge
//                                             (deprecated)
//   tailgate_replica_in_flight_attempts{replica}
//   tailgate_config_reloads_total{result}     ok, rejected
//   tailgate_config_last_reload_successful    1 until a reload is rejected,
//                                             then 0 until one is applied
//   tailgate_config_last_reload_success_timestamp_seconds
//                                             Unix time of the last applied
//                                             load (start-up's included)
//   tailgate_dns_refresh_failures_total{upstream}
//                                             failed or empty lookups of
//                                             resolved replica names
//   tailgate_upstream_replicas{upstream}      replicas in the set now
// and each replica's health (health_metrics.h; labels upstream, replica):
//   tailgate_replica_state{state}             1 for the state now, 0 for
//                                             the others: serving,
//                                             ejected, probing
//   tailgate_ejections_total{reason}          consecutive, failure_rate,
//                                             probe
//   tailgate_probes_total{result}             passed, failed
//   tailgate_give_ups_total                   primaries abandoned at the
//                                             give-up point
//   tailgate_replica_weight                   share of reads now (ramp-up)
//   tailgate_replica_cost_seconds             load-aware choice's cost
//   tailgate_replica_latency_seconds          recent latency estimate
//   tailgate_replica_backed_off               1 while backed off by a
//                                             Retry-After, else 0
//   tailgate_replica_back_off_remaining_seconds
//                                             what is left of it
//   tailgate_replica_overload_answers_total{status}
//                                             429, 503
// and each upstream's request coalescing (`coalesce`):
//   tailgate_coalesced_reads_total{upstream}  reads that joined a fetch
//                                             already in flight
//   tailgate_coalesce_fetches_saved_total{upstream}
//                                             fetches saved: k - 1 per
//                                             fetch answering k callers
// and each upstream's give-up point:
//   tailgate_give_up_seconds{upstream}        0 when giving up is off
//   tailgate_give_up_fallbacks_total{upstream}
// and, from RenderMetrics only, the process itself:
//   tailgate_build_info{version,commit}       always 1
//   process_cpu_seconds_total, process_resident_memory_bytes,
//   process_virtual_memory_bytes, process_open_fds, process_max_fds,
//   process_start_time_seconds                from /proc (process_metrics.h)
//
// Thread safety: pure functions over snapshots (RenderMetrics also reads
// /proc); safe from any thread.

#ifndef TAILGATE_SERVER_OBSERVABILITY_METRICS_H_
#define TAILGATE_SERVER_OBSERVABILITY_METRICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hedge/transport/engine.h"
#include "prometheus/metric_family.h"
#include "server/read/rejections.h"
#include "server/version/build_info.h"

namespace tailgate::server {

// The content type of RenderMetrics' text.
inline constexpr char kMetricsContentType[] =
    "text/plain; version=0.0.4; charset=utf-8";

// Configuration reloads since start (server/config/config_reload.h).
struct ReloadSnapshot {
  uint64_t ok = 0;
  uint64_t rejected = 0;
  // Whether the last load of the configuration was applied: start-up's
  // (always, or the sidecar would not run), then each reload's. A
  // rejected reload makes it false until one is applied.
  bool last_successful = true;
  // When the configuration last loaded was applied (start-up counts).
  absl::Time last_success = absl::UnixEpoch();
};

// attempts / requests; 0 before any request.
double Amplification(const hedge::EngineSnapshot& engine);

std::vector<prometheus::MetricFamily> MetricFamilies(
    const hedge::EngineSnapshot& engine, const RejectionSnapshot& rejections,
    const ReloadSnapshot& reloads = {});

// tailgate_build_info{version,commit} 1.
prometheus::MetricFamily BuildInfoFamily(const BuildInfo& build);

// The text exposition (content type kMetricsContentType, version 0.0.4):
// MetricFamilies, tailgate_build_info and the process_* series.
std::string RenderMetrics(const hedge::EngineSnapshot& engine,
                          const RejectionSnapshot& rejections,
                          const ReloadSnapshot& reloads = {},
                          const BuildInfo& build = {});

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_OBSERVABILITY_METRICS_H_
