#include "server/observability/metrics.h"

#include <limits>
#include <utility>

#include "prometheus/client_metric.h"
#include "prometheus/metric_type.h"
#include "prometheus/text_serializer.h"
#include "server/observability/health_metrics.h"
#include "server/observability/metric_builders.h"
#include "server/observability/process_metrics.h"

namespace tailgate::server {
namespace {

using metrics_internal::Counter;
using metrics_internal::Family;
using metrics_internal::Gauge;
using metrics_internal::Histogram;
using metrics_internal::Labels;
using metrics_internal::PerReplica;
using metrics_internal::PerTenant;
using metrics_internal::PerUpstream;
using metrics_internal::Replica;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

double CircuitStateValue(hedge::CircuitState state) {
  switch (state) {
    case hedge::CircuitState::kClosed:
      return 0;
    case hedge::CircuitState::kOpen:
      return 1;
    case hedge::CircuitState::kHalfOpen:
      break;
  }
  return 2;
}

// The hedge accounting, per upstream (engine_snapshot.h defines each).
void AddHedgeAccounting(const hedge::EngineSnapshot& engine,
                        std::vector<MetricFamily>& families) {
  using hedge::UpstreamSnapshot;
  families.push_back(PerUpstream(
      "tailgate_hedge_delay_seconds",
      "The hedge delay in force now (learned with --hedge_delay=auto), by "
      "upstream.",
      MetricType::Gauge, engine, [](const UpstreamSnapshot& u) {
        return Gauge(absl::ToDoubleSeconds(u.hedge_delay));
      }));
  families.push_back(PerUpstream(
      "tailgate_timer_hedges_total",
      "Timer hedges launched (failure fallbacks excluded), by upstream.",
      MetricType::Counter, engine,
      [](const UpstreamSnapshot& u) { return Counter(u.timer_hedges); }));
  families.push_back(PerUpstream(
      "tailgate_timer_hedge_wins_total",
      "Reads answered by their timer hedge with a good answer (a status under "
      "500, not 429), by "
      "upstream.",
      MetricType::Counter, engine,
      [](const UpstreamSnapshot& u) { return Counter(u.timer_hedge_wins); }));
  families.push_back(PerUpstream(
      "tailgate_late_hedge_waits_total",
      "Hedge timers that found the hedge credits below half the burst and "
      "waited for twice the learned delay, by upstream.",
      MetricType::Counter, engine,
      [](const UpstreamSnapshot& u) { return Counter(u.late_hedge_waits); }));
  families.push_back(PerUpstream(
      "tailgate_queued_hedge_waits_total",
      "Hedge timers that found the primary's request begun after the read's "
      "admission (the sidecar busy) and waited the hedge delay from its "
      "beginning, by upstream.",
      MetricType::Counter, engine,
      [](const UpstreamSnapshot& u) { return Counter(u.queued_hedge_waits); }));
  families.push_back(PerUpstream(
      "tailgate_coalesced_reads_total",
      "Reads that joined an upstream fetch already in flight (coalesce), "
      "by upstream.",
      MetricType::Counter, engine,
      [](const UpstreamSnapshot& u) { return Counter(u.coalesced_reads); }));
  families.push_back(PerUpstream(
      "tailgate_coalesce_fetches_saved_total",
      "Upstream fetches coalescing saved: a shared fetch that answered k "
      "callers saved k - 1, by upstream.",
      MetricType::Counter, engine,
      [](const UpstreamSnapshot& u) { return Counter(u.fetches_saved); }));
  families.push_back(PerUpstream(
      "tailgate_hedge_win_ratio",
      "Recent share of timer hedges that won (about the last 16), by "
      "upstream.",
      MetricType::Gauge, engine,
      [](const UpstreamSnapshot& u) { return Gauge(u.hedge_win_ratio); }));
  families.push_back(PerUpstream(
      "tailgate_hedge_spend_ratio",
      "Share of wanted timer hedges allowed to ask the budget now: cut "
      "toward 0.1 while hedges stop winning, by upstream.",
      MetricType::Gauge, engine,
      [](const UpstreamSnapshot& u) { return Gauge(u.hedge_spend); }));
  families.push_back(PerUpstream(
      "tailgate_hedges_held_back_total",
      "Timer hedges held back because hedges stopped winning, by upstream.",
      MetricType::Counter, engine,
      [](const UpstreamSnapshot& u) { return Counter(u.hedges_held_back); }));
  families.push_back(PerUpstream(
      "tailgate_hedge_loser_bytes_total",
      "Response bytes received by attempts cancelled because the other one "
      "answered, by upstream.",
      MetricType::Counter, engine,
      [](const UpstreamSnapshot& u) { return Counter(u.loser_bytes); }));
  families.push_back(PerUpstream(
      "tailgate_hedge_losers_released_total",
      "Attempts cancelled because the other one answered, by upstream.",
      MetricType::Counter, engine,
      [](const UpstreamSnapshot& u) { return Counter(u.losers_released); }));
  families.push_back(PerUpstream(
      "tailgate_hedge_loser_release_seconds_total",
      "Time from the winner's answer to each loser's transfer being removed "
      "(its connection closed), summed, by upstream.",
      MetricType::Counter, engine, [](const UpstreamSnapshot& u) {
        return Counter(absl::ToDoubleSeconds(u.loser_release_total));
      }));
  families.push_back(PerUpstream(
      "tailgate_hedge_latency_saved_seconds",
      "Per timer-hedge win, the latency it saved: the median time a primary "
      "that had run as long as the cancelled one still needed (estimated "
      "from the upstream's primary latencies), by upstream.",
      MetricType::Histogram, engine,
      [](const UpstreamSnapshot& u) { return Histogram(u.latency_saved); }));
}

}  // namespace

double Amplification(const hedge::EngineSnapshot& engine) {
  if (engine.requests == 0) return 0;
  return static_cast<double>(engine.attempts) /
         static_cast<double>(engine.requests);
}

std::vector<MetricFamily> MetricFamilies(const hedge::EngineSnapshot& engine,
                                         const RejectionSnapshot& rejections,
                                         const ReloadSnapshot& reloads) {
  std::vector<MetricFamily> families;
  auto add = [&families](const char* name, const char* help, MetricType type,
                         std::vector<ClientMetric> metrics) {
    MetricFamily family = Family(name, help, type);
    family.metric = std::move(metrics);
    families.push_back(std::move(family));
  };

  add("tailgate_requests_total", "Reads admitted.", MetricType::Counter,
      {Counter(engine.requests)});
  add("tailgate_rejected_total", "Reads refused before any attempt, by reason.",
      MetricType::Counter,
      {Counter(rejections.invalid_argument, {{"reason", "invalid_argument"}}),
       Counter(rejections.unknown_upstream, {{"reason", "unknown_upstream"}}),
       Counter(rejections.draining, {{"reason", "draining"}}),
       Counter(engine.rejected_overloaded + rejections.too_many_calls,
               {{"reason", "overloaded"}}),
       Counter(rejections.buffer_full, {{"reason", "buffer_full"}}),
       Counter(engine.rejected_tenant_share, {{"reason", "tenant_share"}})});
  add("tailgate_responses_dropped_total",
      "Answers the engine produced that were not sent, by reason: "
      "buffer_full (over --max_buffered_bytes), send_timeout (the client did "
      "not take it within --send_timeout).",
      MetricType::Counter,
      {Counter(rejections.dropped_buffer_full, {{"reason", "buffer_full"}}),
       Counter(rejections.dropped_send_timeout, {{"reason", "send_timeout"}})});
  add("tailgate_buffered_response_bytes",
      "Bytes of answers built and not yet sent to their clients.",
      MetricType::Gauge,
      {Gauge(static_cast<double>(rejections.buffered_response_bytes))});

  MetricFamily attempts = Family(
      "tailgate_attempts_total",
      "Upstream attempts launched, by replica and kind.", MetricType::Counter);
  for (const hedge::ReplicaSnapshot& replica : engine.replicas) {
    const std::pair<const char*, uint64_t> kinds[] = {
        {"primary", replica.attempts_primary},
        {"hedge", replica.attempts_hedge},
        {"fallback", replica.attempts_fallback}};
    for (const auto& [kind, count] : kinds) {
      Labels labels = Replica(replica);
      labels.push_back({"kind", kind});
      attempts.metric.push_back(Counter(count, std::move(labels)));
    }
  }
  families.push_back(std::move(attempts));

  add("tailgate_hedges_total",
      "Extra attempts launched (timer hedges and failure fallbacks).",
      MetricType::Counter, {Counter(engine.hedges)});
  add("tailgate_hedge_wins_total",
      "Reads answered by the extra attempt with a good answer (a status under "
      "500, not 429).",
      MetricType::Counter, {Counter(engine.hedge_wins)});
  add("tailgate_hedges_skipped_total",
      "Extra attempts wanted but not launched, by reason.", MetricType::Counter,
      {Counter(engine.skipped_no_replica, {{"reason", "no_replica"}}),
       Counter(engine.skipped_no_capacity, {{"reason", "no_capacity"}}),
       Counter(engine.skipped_no_budget, {{"reason", "no_budget"}}),
       Counter(engine.skipped_no_retry_budget, {{"reason", "no_retry_budget"}}),
       Counter(engine.skipped_no_tenant_budget,
               {{"reason", "no_tenant_budget"}})});
  add("tailgate_timeouts_total", "Reads that hit their deadline.",
      MetricType::Counter, {Counter(engine.timeouts)});
  add("tailgate_cancelled_total", "Reads cancelled by the caller.",
      MetricType::Counter, {Counter(engine.cancelled)});
  families.push_back(PerReplica(
      "tailgate_backend_failures_total",
      "Attempts that failed: transport error, 5xx, or body over the limit.",
      MetricType::Counter, engine, [](const hedge::ReplicaSnapshot& r) {
        return Counter(r.failures, Replica(r));
      }));

  add("tailgate_in_flight_requests", "Reads in progress.", MetricType::Gauge,
      {Gauge(engine.in_flight_requests)});
  add("tailgate_in_flight_attempts", "Upstream attempts in progress.",
      MetricType::Gauge, {Gauge(engine.in_flight_attempts)});
  families.push_back(PerReplica("tailgate_replica_in_flight_attempts",
                                "Upstream attempts in progress, by replica.",
                                MetricType::Gauge, engine,
                                [](const hedge::ReplicaSnapshot& r) {
                                  return Gauge(r.in_flight, Replica(r));
                                }));
  add("tailgate_preconnects_total",
      "Warm upstream connections (--preconnect): opened ahead of need, used "
      "by an attempt, or discarded unused.",
      MetricType::Counter,
      {Counter(engine.warm_connections.opened, {{"event", "opened"}}),
       Counter(engine.warm_connections.used, {{"event", "used"}}),
       Counter(engine.warm_connections.discarded, {{"event", "discarded"}})});
  add("tailgate_preconnected_idle", "Warm upstream connections held now.",
      MetricType::Gauge, {Gauge(engine.warm_connections.idle)});
  add("tailgate_timer_spin_seconds_total",
      "CPU time the engine loop spent spinning for due timers (--timer_spin).",
      MetricType::Counter,
      {Counter(absl::ToDoubleSeconds(engine.timer_spin_total))});
  add("tailgate_amplification_ratio",
      "Upstream attempts per admitted read since start (0 before any read).",
      MetricType::Gauge, {Gauge(Amplification(engine))});
  add("tailgate_hedge_credits", "Extra-attempt credits available now.",
      MetricType::Gauge, {Gauge(engine.hedge_credits)});
  families.push_back(PerReplica(
      "tailgate_circuit_state",
      "Circuit breaker state: 0 closed (serving), 1 open (ejected), 2 "
      "half-open (probing).",
      MetricType::Gauge, engine, [](const hedge::ReplicaSnapshot& r) {
        return Gauge(CircuitStateValue(r.circuit.state), Replica(r));
      }));
  families.push_back(PerReplica(
      "tailgate_circuit_transitions_total",
      "Circuit transitions of the replica's breaker, by replica (from 0 "
      "again when its breaker is replaced: it rejoined, or a reload changed "
      "its circuit settings).",
      MetricType::Counter, engine, [](const hedge::ReplicaSnapshot& r) {
        return Counter(r.circuit.generation, Replica(r));
      }));
  // Deprecated for tailgate_circuit_transitions_total; kept through 0.3.x.
  families.push_back(PerReplica(
      "tailgate_circuit_generation",
      "Deprecated: tailgate_circuit_transitions_total as a gauge (the "
      "breaker's generation); removed after 0.3.",
      MetricType::Gauge, engine, [](const hedge::ReplicaSnapshot& r) {
        return Gauge(r.circuit.generation, Replica(r));
      }));
  AddReplicaHealth(engine, families);

  families.push_back(PerUpstream(
      "tailgate_upstream_requests_total", "Reads admitted, by upstream.",
      MetricType::Counter, engine,
      [](const hedge::UpstreamSnapshot& u) { return Counter(u.requests); }));
  families.push_back(PerUpstream(
      "tailgate_upstream_hedges_total",
      "Extra attempts launched (hedges and fallbacks), by upstream.",
      MetricType::Counter, engine,
      [](const hedge::UpstreamSnapshot& u) { return Counter(u.hedges); }));
  families.push_back(PerUpstream(
      "tailgate_upstream_hedge_wins_total",
      "Reads answered by the extra attempt with a good answer (a status under "
      "500, not 429), by "
      "upstream.",
      MetricType::Counter, engine,
      [](const hedge::UpstreamSnapshot& u) { return Counter(u.hedge_wins); }));
  families.push_back(PerUpstream(
      "tailgate_upstream_hedge_credits",
      "Timer-hedge credits available now, by upstream (each has its own "
      "budget).",
      MetricType::Gauge, engine,
      [](const hedge::UpstreamSnapshot& u) { return Gauge(u.hedge_credits); }));
  families.push_back(PerUpstream(
      "tailgate_upstream_retry_credits",
      "Failure-fallback credits available now, by upstream (its retry "
      "budget).",
      MetricType::Gauge, engine,
      [](const hedge::UpstreamSnapshot& u) { return Gauge(u.retry_credits); }));
  AddHedgeAccounting(engine, families);

  families.push_back(PerTenant(
      "tailgate_tenant_requests_total", "Reads admitted, by tenant.",
      MetricType::Counter, engine,
      [](const hedge::TenantSnapshot& t) { return Counter(t.requests); }));
  families.push_back(PerTenant(
      "tailgate_tenant_rejected_total",
      "Reads the engine refused (the tenant's share, max_requests or the "
      "upstream's own max_requests), by "
      "tenant.",
      MetricType::Counter, engine,
      [](const hedge::TenantSnapshot& t) { return Counter(t.rejected); }));
  families.push_back(PerTenant(
      "tailgate_tenant_hedges_total",
      "Extra attempts launched (hedges and fallbacks), by tenant.",
      MetricType::Counter, engine,
      [](const hedge::TenantSnapshot& t) { return Counter(t.hedges); }));
  families.push_back(PerTenant(
      "tailgate_tenant_hedge_wins_total",
      "Reads answered by the extra attempt with a good answer (a status under "
      "500, not 429), by "
      "tenant.",
      MetricType::Counter, engine,
      [](const hedge::TenantSnapshot& t) { return Counter(t.hedge_wins); }));
  families.push_back(PerTenant(
      "tailgate_tenant_in_flight_requests", "Reads in progress, by tenant.",
      MetricType::Gauge, engine,
      [](const hedge::TenantSnapshot& t) { return Gauge(t.in_flight); }));
  add("tailgate_config_reloads_total",
      "Configuration reloads (SIGHUP or a changed --config file), by result: "
      "ok (applied), rejected (the file was bad; the running configuration "
      "stays).",
      MetricType::Counter,
      {Counter(reloads.ok, {{"result", "ok"}}),
       Counter(reloads.rejected, {{"result", "rejected"}})});
  add("tailgate_config_last_reload_successful",
      "1 if the last load of the configuration was applied (start-up's, or "
      "the last reload), 0 if it was rejected: 0 stays until a reload is "
      "applied.",
      MetricType::Gauge, {Gauge(reloads.last_successful ? 1 : 0)});
  add("tailgate_config_last_reload_success_timestamp_seconds",
      "Unix time of the last configuration applied (start-up's load, or the "
      "last reload applied).",
      MetricType::Gauge,
      {Gauge(absl::ToDoubleSeconds(reloads.last_success - absl::UnixEpoch()))});
  families.push_back(PerUpstream(
      "tailgate_dns_refresh_failures_total",
      "Failed or empty lookups of resolved replica names, by upstream (the "
      "last good addresses were kept).",
      MetricType::Counter, engine, [](const hedge::UpstreamSnapshot& u) {
        return Counter(u.dns_refresh_failures);
      }));
  families.push_back(PerUpstream(
      "tailgate_upstream_replicas",
      "Replicas in the set now, each address of a resolved name one, by "
      "upstream.",
      MetricType::Gauge, engine, [](const hedge::UpstreamSnapshot& u) {
        return Gauge(static_cast<double>(u.replicas));
      }));

  add("tailgate_request_duration_seconds", "Read latency, admission to answer.",
      MetricType::Histogram, {Histogram(engine.request_duration)});
  families.push_back(
      PerReplica("tailgate_attempt_duration_seconds",
                 "Upstream attempt latency, by replica.", MetricType::Histogram,
                 engine, [](const hedge::ReplicaSnapshot& r) {
                   return Histogram(r.attempt_duration, Replica(r));
                 }));
  return families;
}

MetricFamily BuildInfoFamily(const BuildInfo& build) {
  MetricFamily family =
      Family("tailgate_build_info",
             "Always 1: the version (the VERSION file) and the commit "
             "(\"unknown\" in an unstamped build) of this binary.",
             MetricType::Gauge);
  family.metric.push_back(
      Gauge(1, {{"version", build.version}, {"commit", build.commit}}));
  return family;
}

std::string RenderMetrics(const hedge::EngineSnapshot& engine,
                          const RejectionSnapshot& rejections,
                          const ReloadSnapshot& reloads,
                          const BuildInfo& build) {
  std::vector<MetricFamily> families =
      MetricFamilies(engine, rejections, reloads);
  families.push_back(BuildInfoFamily(build));
  // Without /proc (not Linux, or not mounted) there are no process_*
  // series rather than wrong ones.
  if (absl::StatusOr<ProcessStats> process = ReadProcessStats(); process.ok()) {
    for (MetricFamily& family : ProcessFamilies(*process)) {
      families.push_back(std::move(family));
    }
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace tailgate::server
