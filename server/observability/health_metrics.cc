#include "server/observability/health_metrics.h"

#include <utility>

#include "server/observability/metric_builders.h"

namespace tailgate::server {
namespace {

using hedge::CircuitState;
using hedge::EjectReason;
using hedge::ReplicaSnapshot;
using hedge::UpstreamSnapshot;
using metrics_internal::Counter;
using metrics_internal::Family;
using metrics_internal::Gauge;
using metrics_internal::Labels;
using metrics_internal::PerReplica;
using metrics_internal::PerUpstream;
using metrics_internal::Replica;
using prometheus::MetricFamily;
using prometheus::MetricType;

// `replica`'s labels and one more.
Labels ReplicaAnd(const ReplicaSnapshot& replica, const char* name,
                  const char* value) {
  Labels labels = Replica(replica);
  labels.push_back({name, value});
  return labels;
}

// One sample per state, 1 for the replica's own and 0 for the others, so
// that a query for one state (state="serving" == 0) finds every replica.
MetricFamily States(const hedge::EngineSnapshot& engine) {
  MetricFamily family = Family(
      "tailgate_replica_state",
      "Replica health: 1 for its state now (serving, ejected, probing), 0 "
      "for the others.",
      MetricType::Gauge);
  for (const ReplicaSnapshot& replica : engine.replicas) {
    for (const CircuitState state : {CircuitState::kClosed, CircuitState::kOpen,
                                     CircuitState::kHalfOpen}) {
      family.metric.push_back(
          Gauge(replica.circuit.state == state ? 1 : 0,
                ReplicaAnd(replica, "state", hedge::ReplicaStateName(state))));
    }
  }
  return family;
}

MetricFamily Ejections(const hedge::EngineSnapshot& engine) {
  MetricFamily family =
      Family("tailgate_ejections_total",
             "Replica ejections, by reason: consecutive (--failure_threshold "
             "failures in a row), failure_rate (--ejection_failure_rate of the "
             "window), probe (a failed probe).",
             MetricType::Counter);
  for (const ReplicaSnapshot& replica : engine.replicas) {
    for (const EjectReason reason :
         {EjectReason::kConsecutive, EjectReason::kFailureRate,
          EjectReason::kProbe}) {
      family.metric.push_back(Counter(
          replica.circuit.ejections[static_cast<size_t>(reason)],
          ReplicaAnd(replica, "reason", hedge::EjectReasonName(reason))));
    }
  }
  return family;
}

MetricFamily Probes(const hedge::EngineSnapshot& engine) {
  MetricFamily family =
      Family("tailgate_probes_total",
             "Probes sent to ejected replicas, by result: passed, failed.",
             MetricType::Counter);
  for (const ReplicaSnapshot& replica : engine.replicas) {
    family.metric.push_back(Counter(replica.probes_passed,
                                    ReplicaAnd(replica, "result", "passed")));
    family.metric.push_back(Counter(replica.probes_failed,
                                    ReplicaAnd(replica, "result", "failed")));
  }
  return family;
}

MetricFamily OverloadAnswers(const hedge::EngineSnapshot& engine) {
  MetricFamily family =
      Family("tailgate_replica_overload_answers_total",
             "Overload answers of the replica, by status: 429, 503 (with or "
             "without Retry-After).",
             MetricType::Counter);
  for (const ReplicaSnapshot& replica : engine.replicas) {
    family.metric.push_back(Counter(replica.overload_answers_429,
                                    ReplicaAnd(replica, "status", "429")));
    family.metric.push_back(Counter(replica.overload_answers_503,
                                    ReplicaAnd(replica, "status", "503")));
  }
  return family;
}

}  // namespace

void AddReplicaHealth(const hedge::EngineSnapshot& engine,
                      std::vector<MetricFamily>& families) {
  families.push_back(States(engine));
  families.push_back(Ejections(engine));
  families.push_back(Probes(engine));
  families.push_back(PerReplica(
      "tailgate_give_ups_total",
      "Primaries abandoned at the upstream's give-up point, by replica.",
      MetricType::Counter, engine, [](const ReplicaSnapshot& r) {
        return Counter(r.give_ups, Replica(r));
      }));
  families.push_back(PerReplica(
      "tailgate_replica_weight",
      "Replica's share of reads now: 1 serving, ramping up from 0.1 after "
      "an ejection (--ramp_up), 0 out of service.",
      MetricType::Gauge, engine, [](const ReplicaSnapshot& r) {
        return Gauge(r.circuit.weight, Replica(r));
      }));
  families.push_back(PerReplica(
      "tailgate_replica_cost_seconds",
      "What choosing the replica costs now: max(latency, mean age of its "
      "attempts in flight) * (attempts in flight + 1).",
      MetricType::Gauge, engine, [](const ReplicaSnapshot& r) {
        return Gauge(r.load.cost_seconds, Replica(r));
      }));
  families.push_back(PerReplica(
      "tailgate_replica_latency_seconds",
      "Replica's recent latency: a moving average of its answers over about "
      "a second, decaying while it gets no attempt.",
      MetricType::Gauge, engine, [](const ReplicaSnapshot& r) {
        return Gauge(absl::ToDoubleSeconds(r.load.latency), Replica(r));
      }));
  families.push_back(PerReplica(
      "tailgate_replica_backed_off",
      "1 while the replica is backed off by a Retry-After (no hedge nor "
      "fallback, no primary while another serving replica is not backed "
      "off), else 0.",
      MetricType::Gauge, engine, [](const ReplicaSnapshot& r) {
        return Gauge(r.backed_off ? 1 : 0, Replica(r));
      }));
  families.push_back(PerReplica(
      "tailgate_replica_degraded",
      "1 while the replica is degraded: serving, but failing enough to be "
      "ejected while the ejection cap keeps it in; it takes no hedge nor "
      "fallback and a tenth of its share of primaries. Else 0.",
      MetricType::Gauge, engine, [](const ReplicaSnapshot& r) {
        return Gauge(r.degraded ? 1 : 0, Replica(r));
      }));
  families.push_back(PerReplica(
      "tailgate_replica_back_off_remaining_seconds",
      "How much longer the replica's Retry-After back-off lasts (0 when not "
      "backed off).",
      MetricType::Gauge, engine, [](const ReplicaSnapshot& r) {
        return Gauge(absl::ToDoubleSeconds(r.back_off_remaining), Replica(r));
      }));
  families.push_back(OverloadAnswers(engine));
  families.push_back(PerUpstream(
      "tailgate_give_up_seconds",
      "The give-up point now: how long a primary may run before the read "
      "falls back to another replica (0: giving up is off), by upstream.",
      MetricType::Gauge, engine, [](const UpstreamSnapshot& u) {
        return Gauge(absl::ToDoubleSeconds(u.give_up_after));
      }));
  families.push_back(PerUpstream(
      "tailgate_give_up_fallbacks_total",
      "Primaries given up at the give-up point for a fallback, by upstream.",
      MetricType::Counter, engine, [](const UpstreamSnapshot& u) {
        return Counter(static_cast<double>(u.give_up_fallbacks));
      }));
}

}  // namespace tailgate::server
