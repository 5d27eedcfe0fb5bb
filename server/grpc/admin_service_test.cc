#include "server/grpc/admin_service.h"

#include <grpcpp/grpcpp.h>

#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "server/observability/metrics.h"
#include "server/testing/fake_engine.h"

namespace tailgate::server {
namespace {

using ::tailgate::server::testing::FakeEngine;

hedge::ReplicaSnapshot Replica(const char* url, hedge::CircuitState state) {
  hedge::ReplicaSnapshot replica;
  replica.url = url;
  replica.circuit.state = state;
  return replica;
}

class AdminServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ =
        v1::Admin::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }

  v1::GetStatsResponse Stats() {
    grpc::ClientContext context;
    v1::GetStatsResponse response;
    const grpc::Status status =
        stub_->GetStats(&context, v1::GetStatsRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  FakeEngine engine_;
  Rejections rejections_;
  AdminService service_{engine_, rejections_};
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Admin::Stub> stub_;
};

TEST_F(AdminServiceTest, StatsBeforeAnyReadAreZeroWithZeroAmplification) {
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.requests(), 0u);
  EXPECT_EQ(stats.rejected(), 0u);
  EXPECT_EQ(stats.amplification(), 0);
  EXPECT_EQ(stats.replicas_size(), 0);
}

TEST_F(AdminServiceTest, StatsCarryEveryField) {
  hedge::EngineSnapshot engine;
  engine.requests = 8;
  engine.rejected_overloaded = 1;
  engine.attempts = 10;
  engine.hedges = 2;
  engine.hedge_wins = 1;
  engine.timeouts = 3;
  engine.backend_failures = 4;
  engine.in_flight_requests = 5;
  engine.hedge_credits = 1.75;
  engine.cancelled = 6;
  engine.skipped_no_replica = 1;
  engine.skipped_no_capacity = 2;
  engine.skipped_no_budget = 4;
  engine.skipped_no_retry_budget = 8;
  engine.skipped_no_tenant_budget = 16;
  engine.rejected_tenant_share = 2;
  engine.tenants = {hedge::TenantSnapshot{"", 3, 0, 0, 0, 0},
                    hedge::TenantSnapshot{"team-a", 5, 2, 2, 1, 1}};
  hedge::ReplicaSnapshot a = Replica("http://a:1", hedge::CircuitState::kOpen);
  a.circuit.generation = 3;
  a.attempts_primary = 6;
  a.attempts_hedge = 1;
  a.attempts_fallback = 1;
  a.failures = 4;
  a.in_flight = 2;
  a.upstream = "profiles";
  a.circuit.ejections = {2, 1, 5};
  a.circuit.window_outcomes = 8;
  a.circuit.window_failures = 2;
  a.circuit.weight = 0.5;
  a.circuit.ejected_for = absl::Seconds(4);
  a.give_ups = 7;
  a.probes_passed = 3;
  a.probes_failed = 5;
  a.load.latency = absl::Microseconds(2500);
  a.load.cost_seconds = 0.0075;
  a.backed_off = true;
  a.back_off_remaining = absl::Milliseconds(2500);
  a.overload_answers_429 = 6;
  a.overload_answers_503 = 2;
  hedge::UpstreamSnapshot profiles;
  profiles.name = "profiles";
  profiles.requests = 5;
  profiles.hedges = 2;
  profiles.hedge_wins = 1;
  profiles.hedge_credits = 0.75;
  profiles.retry_credits = 98.5;
  profiles.hedge_delay = absl::Microseconds(1500);
  profiles.hedge_delay_auto = true;
  profiles.timer_hedges = 9;
  profiles.timer_hedge_wins = 8;
  profiles.late_hedge_waits = 5;
  profiles.queued_hedge_waits = 6;
  profiles.hedge_win_ratio = 0.75;
  profiles.hedge_spend = 0.25;
  profiles.hedges_held_back = 4;
  profiles.loser_bytes = 1234;
  profiles.losers_released = 6;
  profiles.loser_release_total = absl::Seconds(2) + absl::Microseconds(300);
  profiles.latency_saved.sum_seconds = 0.5;
  profiles.give_up_after = absl::Milliseconds(120);
  profiles.give_up_learned = true;
  profiles.give_up_fallbacks = 11;
  profiles.coalesced_reads = 12;
  profiles.fetches_saved = 9;
  engine.upstreams = {hedge::UpstreamSnapshot(), profiles};
  engine.replicas = {a, Replica("http://b:2", hedge::CircuitState::kClosed),
                     Replica("http://c:3", hedge::CircuitState::kHalfOpen)};
  engine_.SetSnapshot(engine);
  rejections_.Add(RejectReason::kInvalidArgument);
  rejections_.Add(RejectReason::kUnknownUpstream);
  rejections_.Add(RejectReason::kDraining);

  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.requests(), 8u);
  EXPECT_EQ(stats.rejected(), 6u);  // overloaded, tenant share, the server's
  EXPECT_EQ(stats.attempts(), 10u);
  EXPECT_EQ(stats.hedges(), 2u);
  EXPECT_EQ(stats.hedge_wins(), 1u);
  EXPECT_EQ(stats.timeouts(), 3u);
  EXPECT_EQ(stats.backend_failures(), 4u);
  EXPECT_EQ(stats.in_flight(), 5);
  EXPECT_DOUBLE_EQ(stats.amplification(), 1.25);
  EXPECT_DOUBLE_EQ(stats.hedge_credits(), 1.75);
  EXPECT_EQ(stats.cancelled(), 6u);
  EXPECT_EQ(stats.hedges_skipped(), 31u);  // every reason
  ASSERT_EQ(stats.replicas_size(), 3);
  const v1::ReplicaStats& first = stats.replicas(0);
  EXPECT_EQ(first.url(), "http://a:1");
  EXPECT_EQ(first.circuit(), v1::CIRCUIT_STATE_OPEN);
  EXPECT_EQ(first.generation(), 3u);
  EXPECT_EQ(first.attempts(), 8u);
  EXPECT_EQ(first.failures(), 4u);
  EXPECT_EQ(first.in_flight(), 2);
  EXPECT_EQ(first.upstream(), "profiles");
  EXPECT_EQ(first.state(), v1::REPLICA_STATE_EJECTED);
  EXPECT_EQ(first.ejections_consecutive(), 2u);
  EXPECT_EQ(first.ejections_failure_rate(), 1u);
  EXPECT_EQ(first.ejections_probe(), 5u);
  EXPECT_EQ(first.give_ups(), 7u);
  EXPECT_EQ(first.probes_passed(), 3u);
  EXPECT_EQ(first.probes_failed(), 5u);
  EXPECT_DOUBLE_EQ(first.weight(), 0.5);
  EXPECT_DOUBLE_EQ(first.cost_seconds(), 0.0075);
  EXPECT_EQ(first.latency().seconds(), 0);
  EXPECT_EQ(first.latency().nanos(), 2'500'000);
  EXPECT_DOUBLE_EQ(first.failure_rate(), 0.25);
  EXPECT_EQ(first.ejected_for().seconds(), 4);
  EXPECT_EQ(first.ejected_for().nanos(), 0);
  EXPECT_TRUE(first.backed_off());
  EXPECT_EQ(first.back_off_remaining().seconds(), 2);
  EXPECT_EQ(first.back_off_remaining().nanos(), 500'000'000);
  EXPECT_EQ(first.overload_answers_429(), 6u);
  EXPECT_EQ(first.overload_answers_503(), 2u);
  EXPECT_FALSE(stats.replicas(1).backed_off());
  EXPECT_EQ(stats.replicas(1).back_off_remaining().seconds(), 0);
  EXPECT_EQ(stats.replicas(1).upstream(), "");
  EXPECT_EQ(stats.replicas(1).circuit(), v1::CIRCUIT_STATE_CLOSED);
  EXPECT_EQ(stats.replicas(1).state(), v1::REPLICA_STATE_SERVING);
  EXPECT_DOUBLE_EQ(stats.replicas(1).failure_rate(), 0);  // empty window
  EXPECT_EQ(stats.replicas(2).circuit(), v1::CIRCUIT_STATE_HALF_OPEN);
  EXPECT_EQ(stats.replicas(2).state(), v1::REPLICA_STATE_PROBING);
  ASSERT_EQ(stats.upstreams_size(), 2);
  EXPECT_EQ(stats.upstreams(0).name(), "");
  const v1::UpstreamStats& named = stats.upstreams(1);
  EXPECT_EQ(named.name(), "profiles");
  EXPECT_EQ(named.requests(), 5u);
  EXPECT_EQ(named.hedges(), 2u);
  EXPECT_EQ(named.hedge_wins(), 1u);
  EXPECT_DOUBLE_EQ(named.hedge_credits(), 0.75);
  EXPECT_DOUBLE_EQ(named.retry_credits(), 98.5);
  EXPECT_EQ(named.hedge_delay().seconds(), 0);
  EXPECT_EQ(named.hedge_delay().nanos(), 1'500'000);
  EXPECT_TRUE(named.hedge_delay_auto());
  EXPECT_FALSE(stats.upstreams(0).hedge_delay_auto());
  EXPECT_EQ(named.timer_hedges(), 9u);
  EXPECT_EQ(named.timer_hedge_wins(), 8u);
  EXPECT_EQ(named.late_hedge_waits(), 5u);
  EXPECT_EQ(named.queued_hedge_waits(), 6u);
  EXPECT_DOUBLE_EQ(named.hedge_win_ratio(), 0.75);
  EXPECT_DOUBLE_EQ(named.hedge_spend(), 0.25);
  EXPECT_EQ(named.hedges_held_back(), 4u);
  EXPECT_EQ(named.loser_bytes(), 1234u);
  EXPECT_EQ(named.losers_released(), 6u);
  EXPECT_EQ(named.loser_release_total().seconds(), 2);
  EXPECT_EQ(named.loser_release_total().nanos(), 300'000);
  EXPECT_EQ(named.latency_saved_total().seconds(), 0);
  EXPECT_EQ(named.latency_saved_total().nanos(), 500'000'000);
  EXPECT_EQ(named.give_up_after().seconds(), 0);
  EXPECT_EQ(named.give_up_after().nanos(), 120'000'000);
  EXPECT_TRUE(named.give_up_learned());
  EXPECT_EQ(named.give_up_fallbacks(), 11u);
  EXPECT_EQ(named.coalesced_reads(), 12u);
  EXPECT_EQ(named.fetches_saved(), 9u);
  EXPECT_EQ(stats.upstreams(0).give_up_after().nanos(), 0);  // off
  EXPECT_FALSE(stats.upstreams(0).give_up_learned());
  ASSERT_EQ(stats.tenants_size(), 2);
  EXPECT_EQ(stats.tenants(0).name(), "");
  EXPECT_EQ(stats.tenants(0).requests(), 3u);
  const v1::TenantStats& team = stats.tenants(1);
  EXPECT_EQ(team.name(), "team-a");
  EXPECT_EQ(team.requests(), 5u);
  EXPECT_EQ(team.rejected(), 2u);
  EXPECT_EQ(team.hedges(), 2u);
  EXPECT_EQ(team.hedge_wins(), 1u);
  EXPECT_EQ(team.in_flight(), 1);
}

// `text` without the process_* samples, whose values change from one
// scrape to the next (their HELP and TYPE lines stay).
std::string WithoutProcessSamples(const std::string& text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, "process_")) absl::StrAppend(&out, line, "\n");
  }
  return out;
}

TEST_F(AdminServiceTest, GetMetricsIsTheSameExpositionAsMetricsEndpoint) {
  hedge::EngineSnapshot engine;
  engine.requests = 3;
  engine_.SetSnapshot(engine);
  rejections_.Add(RejectReason::kDraining);

  grpc::ClientContext context;
  v1::GetMetricsResponse response;
  ASSERT_TRUE(
      stub_->GetMetrics(&context, v1::GetMetricsRequest(), &response).ok());
  EXPECT_EQ(response.content_type(),
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(WithoutProcessSamples(response.text()),
            WithoutProcessSamples(
                RenderMetrics(engine_.Snapshot(), rejections_.Snapshot())));
  EXPECT_NE(response.text().find("\nprocess_open_fds "), std::string::npos);
  EXPECT_NE(response.text().find("tailgate_requests_total 3\n"),
            std::string::npos);
}

}  // namespace
}  // namespace tailgate::server
