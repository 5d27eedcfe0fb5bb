#include "server/grpc/admin_service.h"

#include <utility>

#include "server/observability/metrics.h"

namespace tailgate::server {
namespace {

v1::CircuitState ToProto(hedge::CircuitState state) {
  switch (state) {
    case hedge::CircuitState::kClosed:
      return v1::CIRCUIT_STATE_CLOSED;
    case hedge::CircuitState::kOpen:
      return v1::CIRCUIT_STATE_OPEN;
    case hedge::CircuitState::kHalfOpen:
      return v1::CIRCUIT_STATE_HALF_OPEN;
  }
  return v1::CIRCUIT_STATE_UNSPECIFIED;
}

v1::ReplicaState ReplicaStateOf(hedge::CircuitState state) {
  switch (state) {
    case hedge::CircuitState::kClosed:
      return v1::REPLICA_STATE_SERVING;
    case hedge::CircuitState::kOpen:
      return v1::REPLICA_STATE_EJECTED;
    case hedge::CircuitState::kHalfOpen:
      return v1::REPLICA_STATE_PROBING;
  }
  return v1::REPLICA_STATE_UNSPECIFIED;
}

grpc::ServerUnaryReactor* FinishOk(grpc::CallbackServerContext* context) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

void SetDuration(absl::Duration d, google::protobuf::Duration* out) {
  const int64_t nanos = absl::ToInt64Nanoseconds(d);
  out->set_seconds(nanos / 1'000'000'000);
  out->set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
}

// A replica's health (circuit_breaker.h) and load (replica_load.h).
void FillHealth(const hedge::ReplicaSnapshot& replica, v1::ReplicaStats* out) {
  const hedge::CircuitSnapshot& circuit = replica.circuit;
  const auto ejections = [&circuit](hedge::EjectReason reason) {
    return circuit.ejections[static_cast<size_t>(reason)];
  };
  out->set_state(ReplicaStateOf(circuit.state));
  out->set_ejections_consecutive(ejections(hedge::EjectReason::kConsecutive));
  out->set_ejections_failure_rate(ejections(hedge::EjectReason::kFailureRate));
  out->set_ejections_probe(ejections(hedge::EjectReason::kProbe));
  out->set_give_ups(replica.give_ups);
  out->set_probes_passed(replica.probes_passed);
  out->set_probes_failed(replica.probes_failed);
  out->set_weight(circuit.weight);
  out->set_cost_seconds(replica.load.cost_seconds);
  SetDuration(replica.load.latency, out->mutable_latency());
  out->set_failure_rate(circuit.window_outcomes == 0
                            ? 0
                            : static_cast<double>(circuit.window_failures) /
                                  static_cast<double>(circuit.window_outcomes));
  SetDuration(circuit.ejected_for, out->mutable_ejected_for());
  out->set_backed_off(replica.backed_off);
  SetDuration(replica.back_off_remaining, out->mutable_back_off_remaining());
  out->set_overload_answers_429(replica.overload_answers_429);
  out->set_overload_answers_503(replica.overload_answers_503);
  out->set_degraded(replica.degraded);
}

void FillStats(const hedge::EngineSnapshot& engine,
               const RejectionSnapshot& rejections,
               const ReloadSnapshot& reloads, v1::GetStatsResponse* response) {
  response->set_config_reloads(reloads.ok);
  response->set_config_reloads_rejected(reloads.rejected);
  response->set_dns_refresh_failures(engine.dns_refresh_failures);
  response->set_requests(engine.requests);
  response->set_rejected(
      engine.rejected_overloaded + engine.rejected_tenant_share +
      rejections.invalid_argument + rejections.unknown_upstream +
      rejections.draining + rejections.too_many_calls + rejections.buffer_full);
  response->set_attempts(engine.attempts);
  response->set_hedges(engine.hedges);
  response->set_hedge_wins(engine.hedge_wins);
  response->set_timeouts(engine.timeouts);
  response->set_backend_failures(engine.backend_failures);
  response->set_in_flight(engine.in_flight_requests);
  response->set_amplification(Amplification(engine));
  response->set_hedge_credits(engine.hedge_credits);
  response->set_cancelled(engine.cancelled);
  response->set_hedges_skipped(
      engine.skipped_no_replica + engine.skipped_no_capacity +
      engine.skipped_no_budget + engine.skipped_no_retry_budget +
      engine.skipped_no_tenant_budget);
  for (const hedge::ReplicaSnapshot& replica : engine.replicas) {
    v1::ReplicaStats* stats = response->add_replicas();
    stats->set_url(replica.url);
    stats->set_circuit(ToProto(replica.circuit.state));
    stats->set_generation(replica.circuit.generation);
    stats->set_attempts(replica.attempts_primary + replica.attempts_hedge +
                        replica.attempts_fallback);
    stats->set_failures(replica.failures);
    stats->set_in_flight(replica.in_flight);
    stats->set_upstream(replica.upstream);
    stats->set_address(replica.address);
    FillHealth(replica, stats);
  }
  for (const hedge::TenantSnapshot& tenant : engine.tenants) {
    v1::TenantStats* stats = response->add_tenants();
    stats->set_name(tenant.name);
    stats->set_requests(tenant.requests);
    stats->set_rejected(tenant.rejected);
    stats->set_hedges(tenant.hedges);
    stats->set_hedge_wins(tenant.hedge_wins);
    stats->set_in_flight(tenant.in_flight);
  }
  for (const hedge::UpstreamSnapshot& upstream : engine.upstreams) {
    v1::UpstreamStats* stats = response->add_upstreams();
    stats->set_name(upstream.name);
    stats->set_requests(upstream.requests);
    stats->set_hedges(upstream.hedges);
    stats->set_hedge_wins(upstream.hedge_wins);
    stats->set_hedge_credits(upstream.hedge_credits);
    stats->set_retry_credits(upstream.retry_credits);
    stats->set_dns_refresh_failures(upstream.dns_refresh_failures);
    stats->set_replicas(upstream.replicas);
    SetDuration(upstream.hedge_delay, stats->mutable_hedge_delay());
    stats->set_timer_hedges(upstream.timer_hedges);
    stats->set_timer_hedge_wins(upstream.timer_hedge_wins);
    stats->set_late_hedge_waits(upstream.late_hedge_waits);
    stats->set_queued_hedge_waits(upstream.queued_hedge_waits);
    stats->set_hedge_win_ratio(upstream.hedge_win_ratio);
    stats->set_hedge_spend(upstream.hedge_spend);
    stats->set_hedges_held_back(upstream.hedges_held_back);
    stats->set_loser_bytes(upstream.loser_bytes);
    stats->set_losers_released(upstream.losers_released);
    SetDuration(upstream.loser_release_total,
                stats->mutable_loser_release_total());
    SetDuration(absl::Seconds(upstream.latency_saved.sum_seconds),
                stats->mutable_latency_saved_total());
    stats->set_hedge_delay_auto(upstream.hedge_delay_auto);
    SetDuration(upstream.give_up_after, stats->mutable_give_up_after());
    stats->set_give_up_learned(upstream.give_up_learned);
    stats->set_give_up_fallbacks(upstream.give_up_fallbacks);
    stats->set_coalesced_reads(upstream.coalesced_reads);
    stats->set_fetches_saved(upstream.fetches_saved);
  }
}

}  // namespace

AdminService::AdminService(const hedge::Engine& engine,
                           const Rejections& rejections,
                           std::function<ReloadSnapshot()> reloads,
                           BuildInfo build)
    : engine_(engine),
      rejections_(rejections),
      reloads_(std::move(reloads)),
      build_(std::move(build)) {}

grpc::ServerUnaryReactor* AdminService::GetStats(
    grpc::CallbackServerContext* context,
    const v1::GetStatsRequest* /*request*/, v1::GetStatsResponse* response) {
  FillStats(engine_.Snapshot(), rejections_.Snapshot(), Reloads(), response);
  return FinishOk(context);
}

grpc::ServerUnaryReactor* AdminService::GetMetrics(
    grpc::CallbackServerContext* context,
    const v1::GetMetricsRequest* /*request*/,
    v1::GetMetricsResponse* response) {
  response->set_content_type(kMetricsContentType);
  response->set_text(RenderMetrics(engine_.Snapshot(), rejections_.Snapshot(),
                                   Reloads(), build_));
  return FinishOk(context);
}

}  // namespace tailgate::server
