#include "client/admin_client.h"

#include <grpcpp/grpcpp.h>

#include <memory>
#include <utility>

#include "client/sidecar_channel.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"

namespace tailgate {

absl::string_view CircuitStateName(CircuitState state) {
  switch (state) {
    case CircuitState::kClosed:
      return "closed";
    case CircuitState::kOpen:
      return "open";
    case CircuitState::kHalfOpen:
      return "half-open";
    case CircuitState::kUnspecified:
      break;
  }
  return "unspecified";
}

absl::string_view ReplicaStateName(ReplicaState state) {
  switch (state) {
    case ReplicaState::kServing:
      return "serving";
    case ReplicaState::kEjected:
      return "ejected";
    case ReplicaState::kProbing:
      return "probing";
    case ReplicaState::kUnspecified:
      break;
  }
  return "unspecified";
}

namespace {

using client_internal::FromGrpcStatus;
using client_internal::FromProtoDuration;

CircuitState FromProto(v1::CircuitState state) {
  switch (state) {
    case v1::CIRCUIT_STATE_CLOSED:
      return CircuitState::kClosed;
    case v1::CIRCUIT_STATE_OPEN:
      return CircuitState::kOpen;
    case v1::CIRCUIT_STATE_HALF_OPEN:
      return CircuitState::kHalfOpen;
    default:
      return CircuitState::kUnspecified;
  }
}

ReplicaState FromProto(v1::ReplicaState state) {
  switch (state) {
    case v1::REPLICA_STATE_SERVING:
      return ReplicaState::kServing;
    case v1::REPLICA_STATE_EJECTED:
      return ReplicaState::kEjected;
    case v1::REPLICA_STATE_PROBING:
      return ReplicaState::kProbing;
    default:
      return ReplicaState::kUnspecified;
  }
}

ReplicaStats FromProto(const v1::ReplicaStats& proto) {
  ReplicaStats replica;
  replica.url = proto.url();
  replica.circuit = FromProto(proto.circuit());
  replica.generation = proto.generation();
  replica.attempts = proto.attempts();
  replica.failures = proto.failures();
  replica.in_flight = proto.in_flight();
  // A sidecar from before ReplicaState sends the circuit alone.
  replica.state = proto.state() != v1::REPLICA_STATE_UNSPECIFIED
                      ? FromProto(proto.state())
                      : FromProto(static_cast<v1::ReplicaState>(
                            static_cast<int>(proto.circuit())));
  replica.ejections_consecutive = proto.ejections_consecutive();
  replica.ejections_failure_rate = proto.ejections_failure_rate();
  replica.ejections_probe = proto.ejections_probe();
  replica.give_ups = proto.give_ups();
  replica.probes_passed = proto.probes_passed();
  replica.probes_failed = proto.probes_failed();
  replica.weight = proto.weight();
  replica.cost_seconds = proto.cost_seconds();
  replica.latency = FromProtoDuration(proto.latency());
  replica.failure_rate = proto.failure_rate();
  replica.ejected_for = FromProtoDuration(proto.ejected_for());
  replica.backed_off = proto.backed_off();
  replica.back_off_remaining = FromProtoDuration(proto.back_off_remaining());
  replica.degraded = proto.degraded();
  replica.overload_answers_429 = proto.overload_answers_429();
  replica.overload_answers_503 = proto.overload_answers_503();
  return replica;
}

SidecarStats FromProto(const v1::GetStatsResponse& proto) {
  SidecarStats stats;
  stats.requests = proto.requests();
  stats.rejected = proto.rejected();
  stats.attempts = proto.attempts();
  stats.hedges = proto.hedges();
  stats.hedge_wins = proto.hedge_wins();
  stats.timeouts = proto.timeouts();
  stats.hedges_skipped = proto.hedges_skipped();
  stats.cancelled = proto.cancelled();
  stats.backend_failures = proto.backend_failures();
  stats.in_flight = proto.in_flight();
  stats.amplification = proto.amplification();
  stats.hedge_credits = proto.hedge_credits();
  stats.replicas.reserve(proto.replicas_size());
  for (const v1::ReplicaStats& replica : proto.replicas()) {
    stats.replicas.push_back(FromProto(replica));
  }
  stats.upstreams.reserve(proto.upstreams_size());
  for (const v1::UpstreamStats& upstream : proto.upstreams()) {
    UpstreamStats& added = stats.upstreams.emplace_back();
    added.name = upstream.name();
    added.give_up_after = FromProtoDuration(upstream.give_up_after());
    added.give_up_learned = upstream.give_up_learned();
    added.give_up_fallbacks = upstream.give_up_fallbacks();
  }
  return stats;
}

class GrpcAdminClient final : public AdminClient {
 public:
  GrpcAdminClient(std::shared_ptr<grpc::Channel> channel,
                  const ClientOptions& options)
      : stub_(v1::Admin::NewStub(std::move(channel))),
        deadline_(options.default_deadline) {}

  absl::StatusOr<SidecarStats> GetStats() override {
    grpc::ClientContext context;
    client_internal::SetTimeout(context, deadline_);
    v1::GetStatsResponse response;
    const grpc::Status status =
        stub_->GetStats(&context, v1::GetStatsRequest(), &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return FromProto(response);
  }

  absl::StatusOr<MetricsText> GetMetrics() override {
    grpc::ClientContext context;
    client_internal::SetTimeout(context, deadline_);
    v1::GetMetricsResponse response;
    const grpc::Status status =
        stub_->GetMetrics(&context, v1::GetMetricsRequest(), &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return MetricsText{std::move(*response.mutable_content_type()),
                       std::move(*response.mutable_text())};
  }

 private:
  // Constant after construction.
  const std::unique_ptr<v1::Admin::Stub> stub_;
  const absl::Duration deadline_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AdminClient>> AdminClient::Connect(
    absl::string_view target, const ClientOptions& options) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      client_internal::OpenSidecarChannel(target, options);
  if (!channel.ok()) return channel.status();
  return std::make_unique<GrpcAdminClient>(*std::move(channel), options);
}

}  // namespace tailgate
