#include "server/observability/metrics.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "hedge/latency_histogram.h"

namespace tailgate::server {
namespace {

constexpr char kPromtool[] = "/usr/bin/promtool";  // tools/bootstrap

hedge::HistogramSnapshot Latencies(std::initializer_list<int> millis) {
  hedge::LatencyHistogram histogram;
  for (int ms : millis) histogram.Record(absl::Milliseconds(ms));
  return histogram.Snapshot();
}

hedge::ReplicaSnapshot Replica(const char* url, hedge::CircuitState state,
                               uint64_t generation) {
  hedge::ReplicaSnapshot replica;
  replica.url = url;
  replica.circuit.state = state;
  replica.circuit.generation = generation;
  return replica;
}

hedge::EngineSnapshot Busy() {
  hedge::EngineSnapshot engine;
  engine.requests = 10;
  engine.rejected_overloaded = 4;
  engine.attempts = 12;
  engine.hedges = 2;
  engine.fallbacks = 1;
  engine.hedge_wins = 1;
  engine.timeouts = 3;
  engine.cancelled = 5;
  engine.backend_failures = 6;
  engine.skipped_no_replica = 7;
  engine.skipped_no_capacity = 8;
  engine.skipped_no_budget = 9;
  engine.skipped_no_retry_budget = 14;
  engine.skipped_no_tenant_budget = 15;
  engine.rejected_tenant_share = 16;
  engine.in_flight_requests = 2;
  engine.in_flight_attempts = 3;
  engine.hedge_credits = 1.5;
  engine.warm_connections = {21, 17, 3, 1};
  engine.timer_spin_total = absl::Milliseconds(250);
  engine.request_duration = Latencies({1, 1, 30, 5000});
  hedge::ReplicaSnapshot a =
      Replica("http://a:8001", hedge::CircuitState::kOpen, 3);
  a.attempts_primary = 8;
  a.attempts_hedge = 1;
  a.failures = 6;
  a.in_flight = 1;
  a.attempt_duration = Latencies({2, 40});
  hedge::ReplicaSnapshot b =
      Replica("http://b:8002", hedge::CircuitState::kHalfOpen, 4);
  b.attempts_primary = 2;
  b.attempts_fallback = 1;
  b.attempt_duration = Latencies({});
  engine.replicas = {a, b};
  hedge::TenantSnapshot none;  // reads without a tenant
  none.requests = 4;
  hedge::TenantSnapshot team{"team-a", 6, 2, 2, 1, 1};
  engine.tenants = {none, team};
  return engine;
}

RejectionSnapshot SomeRejections() {
  RejectionSnapshot rejections;
  rejections.invalid_argument = 11;
  rejections.unknown_upstream = 12;
  rejections.draining = 13;
  return rejections;
}

// Runs `promtool check metrics` on `text`; returns its exit status and
// fills `output` with what it printed.
int Promtool(const std::string& text, std::string& output) {
  const std::string dir =
      std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string path = absl::StrCat(dir, "/metrics.txt");
  std::ofstream(path) << text;
  FILE* pipe = popen(
      absl::StrCat(kPromtool, " check metrics < ", path, " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[512];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe)) > 0;) {
    output.append(buf, n);
  }
  return WEXITSTATUS(pclose(pipe));
}

// Lines of `text` that start with `prefix`.
int CountLines(const std::string& text, absl::string_view prefix) {
  int count = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, prefix)) ++count;
  }
  return count;
}

bool HasLine(const std::string& text, absl::string_view line) {
  return absl::StrContains(absl::StrCat("\n", text),
                           absl::StrCat("\n", line, "\n"));
}

TEST(MetricsTest, PassesPromtoolLint) {
  ASSERT_EQ(access(kPromtool, X_OK), 0)
      << kPromtool << " is missing: run tools/bootstrap";
  for (const hedge::EngineSnapshot& engine :
       {Busy(), hedge::EngineSnapshot()}) {
    const std::string text = RenderMetrics(engine, SomeRejections());
    std::string output;
    EXPECT_EQ(Promtool(text, output), 0) << output << "\n" << text;
    EXPECT_EQ(output, "") << text;
  }
}

TEST(MetricsTest, EveryDesignedNameHasHelpAndType) {
  const std::string text = RenderMetrics(Busy(), SomeRejections());
  const std::pair<const char*, const char*> names[] = {
      {"tailgate_requests_total", "counter"},
      {"tailgate_rejected_total", "counter"},
      {"tailgate_attempts_total", "counter"},
      {"tailgate_hedges_total", "counter"},
      {"tailgate_hedge_wins_total", "counter"},
      {"tailgate_timeouts_total", "counter"},
      {"tailgate_backend_failures_total", "counter"},
      {"tailgate_in_flight_requests", "gauge"},
      {"tailgate_in_flight_attempts", "gauge"},
      {"tailgate_amplification_ratio", "gauge"},
      {"tailgate_hedge_credits", "gauge"},
      {"tailgate_circuit_state", "gauge"},
      {"tailgate_request_duration_seconds", "histogram"},
      {"tailgate_attempt_duration_seconds", "histogram"},
      {"tailgate_hedges_skipped_total", "counter"},
      {"tailgate_cancelled_total", "counter"},
      {"tailgate_circuit_generation", "gauge"},
      {"tailgate_circuit_transitions_total", "counter"},
      {"tailgate_build_info", "gauge"},
      {"process_cpu_seconds_total", "counter"},
      {"process_resident_memory_bytes", "gauge"},
      {"process_virtual_memory_bytes", "gauge"},
      {"process_start_time_seconds", "gauge"},
      {"process_open_fds", "gauge"},
      {"process_max_fds", "gauge"},
      {"tailgate_replica_in_flight_attempts", "gauge"},
      {"tailgate_preconnects_total", "counter"},
      {"tailgate_preconnected_idle", "gauge"},
      {"tailgate_timer_spin_seconds_total", "counter"},
      {"tailgate_tenant_requests_total", "counter"},
      {"tailgate_tenant_rejected_total", "counter"},
      {"tailgate_tenant_hedges_total", "counter"},
      {"tailgate_tenant_hedge_wins_total", "counter"},
      {"tailgate_tenant_in_flight_requests", "gauge"},
      {"tailgate_replica_state", "gauge"},
      {"tailgate_ejections_total", "counter"},
      {"tailgate_give_ups_total", "counter"},
      {"tailgate_probes_total", "counter"},
      {"tailgate_replica_weight", "gauge"},
      {"tailgate_replica_cost_seconds", "gauge"},
      {"tailgate_replica_latency_seconds", "gauge"},
      {"tailgate_replica_backed_off", "gauge"},
      {"tailgate_replica_degraded", "gauge"},
      {"tailgate_replica_back_off_remaining_seconds", "gauge"},
      {"tailgate_replica_overload_answers_total", "counter"},
      {"tailgate_give_up_seconds", "gauge"},
      {"tailgate_give_up_fallbacks_total", "counter"},
      {"tailgate_coalesced_reads_total", "counter"},
      {"tailgate_coalesce_fetches_saved_total", "counter"},
  };
  for (const auto& [name, type] : names) {
    EXPECT_TRUE(absl::StrContains(text, absl::StrCat("# HELP ", name, " ")))
        << name;
    EXPECT_TRUE(HasLine(text, absl::StrCat("# TYPE ", name, " ", type)))
        << name;
  }
}

TEST(MetricsTest, CountersAndGaugesCarryTheSnapshot) {
  const std::string text = RenderMetrics(Busy(), SomeRejections());
  for (const char* line : {
           "tailgate_requests_total 10",
           "tailgate_rejected_total{reason=\"invalid_argument\"} 11",
           "tailgate_rejected_total{reason=\"unknown_upstream\"} 12",
           "tailgate_rejected_total{reason=\"draining\"} 13",
           "tailgate_rejected_total{reason=\"overloaded\"} 4",
           "tailgate_attempts_total{upstream=\"\",replica=\"http://"
           "a:8001\",kind=\"primary\"} 8",
           "tailgate_attempts_total{upstream=\"\",replica=\"http://"
           "a:8001\",kind=\"hedge\"} "
           "1",
           "tailgate_attempts_total{upstream=\"\",replica=\"http://"
           "a:8001\",kind=\"fallback\"} 0",
           "tailgate_attempts_total{upstream=\"\",replica=\"http://"
           "b:8002\",kind=\"fallback\"} 1",
           "tailgate_hedges_total 2",
           "tailgate_hedge_wins_total 1",
           "tailgate_timeouts_total 3",
           "tailgate_cancelled_total 5",
           "tailgate_hedges_skipped_total{reason=\"no_replica\"} 7",
           "tailgate_hedges_skipped_total{reason=\"no_capacity\"} 8",
           "tailgate_hedges_skipped_total{reason=\"no_budget\"} 9",
           "tailgate_hedges_skipped_total{reason=\"no_retry_budget\"} 14",
           "tailgate_hedges_skipped_total{reason=\"no_tenant_budget\"} 15",
           "tailgate_rejected_total{reason=\"tenant_share\"} 16",
           "tailgate_tenant_requests_total{tenant=\"\"} 4",
           "tailgate_tenant_requests_total{tenant=\"team-a\"} 6",
           "tailgate_tenant_rejected_total{tenant=\"team-a\"} 2",
           "tailgate_tenant_hedges_total{tenant=\"team-a\"} 2",
           "tailgate_tenant_hedge_wins_total{tenant=\"team-a\"} 1",
           "tailgate_tenant_in_flight_requests{tenant=\"team-a\"} 1",
           "tailgate_backend_failures_total{upstream=\"\",replica=\"http://"
           "a:8001\"} 6",
           "tailgate_backend_failures_total{upstream=\"\",replica=\"http://"
           "b:8002\"} 0",
           "tailgate_in_flight_requests 2",
           "tailgate_in_flight_attempts 3",
           "tailgate_replica_in_flight_attempts{upstream=\"\",replica=\"http://"
           "a:8001\"} 1",
           "tailgate_amplification_ratio 1.2",
           "tailgate_hedge_credits 1.5",
           "tailgate_circuit_state{upstream=\"\",replica=\"http://a:8001\"} 1",
           "tailgate_circuit_state{upstream=\"\",replica=\"http://b:8002\"} 2",
           "tailgate_circuit_generation{upstream=\"\",replica=\"http://"
           "b:8002\"} 4",
           "tailgate_circuit_transitions_total{upstream=\"\",replica=\"http://"
           "a:8001\"} 3",
           "tailgate_circuit_transitions_total{upstream=\"\",replica=\"http://"
           "b:8002\"} 4",
           "tailgate_preconnects_total{event=\"opened\"} 21",
           "tailgate_preconnects_total{event=\"used\"} 17",
           "tailgate_preconnects_total{event=\"discarded\"} 3",
           "tailgate_preconnected_idle 1",
           "tailgate_timer_spin_seconds_total 0.25",
       }) {
    EXPECT_TRUE(HasLine(text, line)) << line << "\nin:\n" << text;
  }
}

TEST(MetricsTest, BuildInfoIsOneSeriesOfValueOne) {
  const std::string text =
      RenderMetrics(Busy(), SomeRejections(), {}, {"1.2.3", "abc123"});
  EXPECT_TRUE(HasLine(
      text, "tailgate_build_info{version=\"1.2.3\",commit=\"abc123\"} 1"))
      << text;
  EXPECT_EQ(CountLines(text, "tailgate_build_info{"), 1) << text;
}

TEST(MetricsTest, ProcessSeriesArePresent) {
  const std::string text = RenderMetrics(Busy(), SomeRejections());
  for (const char* name :
       {"process_cpu_seconds_total ", "process_resident_memory_bytes ",
        "process_virtual_memory_bytes ", "process_start_time_seconds ",
        "process_open_fds ", "process_max_fds "}) {
    EXPECT_EQ(CountLines(text, name), 1) << name << "\nin:\n" << text;
  }
}

TEST(MetricsTest, ConfigReloadsHaveTheLastOutcomeAndItsTime) {
  const ReloadSnapshot rejected{
      .ok = 2,
      .rejected = 5,
      .last_successful = false,
      .last_success = absl::FromUnixSeconds(1767052800) + absl::Seconds(0.5)};
  const std::string text = RenderMetrics(Busy(), SomeRejections(), rejected);
  for (const char* line : {
           "# TYPE tailgate_config_reloads_total counter",
           "tailgate_config_reloads_total{result=\"ok\"} 2",
           "tailgate_config_reloads_total{result=\"rejected\"} 5",
           "# TYPE tailgate_config_last_reload_successful gauge",
           "tailgate_config_last_reload_successful 0",
           "# TYPE tailgate_config_last_reload_success_timestamp_seconds gauge",
           "tailgate_config_last_reload_success_timestamp_seconds "
           "1767052800.5",
       }) {
    EXPECT_TRUE(HasLine(text, line)) << line << "\nin:\n" << text;
  }
  ReloadSnapshot applied = rejected;
  applied.last_successful = true;
  EXPECT_TRUE(HasLine(RenderMetrics(Busy(), SomeRejections(), applied),
                      "tailgate_config_last_reload_successful 1"));
  std::string output;
  EXPECT_EQ(Promtool(text, output), 0) << output;
  EXPECT_EQ(output, "");
}

TEST(MetricsTest, NamedUpstreamsLabelTheirReplicasAndHaveTheirOwnTotals) {
  hedge::EngineSnapshot engine;
  hedge::ReplicaSnapshot replica =
      Replica("http://p:1", hedge::CircuitState::kClosed, 0);
  replica.upstream = "profiles";
  replica.failures = 2;
  engine.replicas = {replica};
  hedge::UpstreamSnapshot defaults;
  defaults.requests = 3;
  hedge::UpstreamSnapshot profiles;
  profiles.name = "profiles";
  profiles.requests = 7;
  profiles.hedges = 2;
  profiles.hedge_wins = 1;
  profiles.hedge_credits = 0.5;
  profiles.retry_credits = 99.25;
  profiles.hedge_delay = absl::Milliseconds(10);
  profiles.timer_hedges = 9;
  profiles.timer_hedge_wins = 8;
  profiles.late_hedge_waits = 5;
  profiles.queued_hedge_waits = 6;
  profiles.hedge_win_ratio = 0.75;
  profiles.hedge_spend = 0.25;
  profiles.hedges_held_back = 4;
  profiles.loser_bytes = 1234;
  profiles.losers_released = 6;
  profiles.loser_release_total = absl::Microseconds(300);
  profiles.latency_saved.bounds_seconds =
      hedge::LatencyHistogram::BoundsSeconds();
  profiles.latency_saved.counts.assign(
      hedge::LatencyHistogram::BoundsSeconds().size() + 1, 0);
  profiles.latency_saved.counts.back() = 3;
  profiles.latency_saved.count = 3;
  profiles.latency_saved.sum_seconds = 9;
  engine.upstreams = {defaults, profiles};
  const std::string text = RenderMetrics(engine, {});
  for (const char* line : {
           "tailgate_backend_failures_total{upstream=\"profiles\",replica="
           "\"http://p:1\"} 2",
           "tailgate_circuit_state{upstream=\"profiles\",replica=\"http://"
           "p:1\"} 0",
           "tailgate_attempts_total{upstream=\"profiles\",replica=\"http://"
           "p:1\",kind=\"hedge\"} 0",
           "tailgate_upstream_requests_total{upstream=\"\"} 3",
           "tailgate_upstream_requests_total{upstream=\"profiles\"} 7",
           "tailgate_upstream_hedges_total{upstream=\"profiles\"} 2",
           "tailgate_upstream_hedge_wins_total{upstream=\"profiles\"} 1",
           "tailgate_upstream_hedge_credits{upstream=\"profiles\"} 0.5",
           "tailgate_upstream_retry_credits{upstream=\"profiles\"} 99.25",
           "tailgate_hedge_delay_seconds{upstream=\"profiles\"} "
           "0.01",
           "tailgate_timer_hedges_total{upstream=\"profiles\"} 9",
           "tailgate_timer_hedge_wins_total{upstream=\"profiles\"} 8",
           "tailgate_late_hedge_waits_total{upstream=\"profiles\"} 5",
           "tailgate_queued_hedge_waits_total{upstream=\"profiles\"} 6",
           "tailgate_hedge_win_ratio{upstream=\"profiles\"} 0.75",
           "tailgate_hedge_spend_ratio{upstream=\"profiles\"} 0.25",
           "tailgate_hedges_held_back_total{upstream=\"profiles\"} 4",
           "tailgate_hedge_loser_bytes_total{upstream=\"profiles\"} 1234",
           "tailgate_hedge_losers_released_total{upstream=\"profiles\"} 6",
           "tailgate_hedge_loser_release_seconds_total{upstream="
           "\"profiles\"} 0.0003",
           "tailgate_hedge_latency_saved_seconds_count{upstream="
           "\"profiles\"} 3",
           "tailgate_hedge_latency_saved_seconds_sum{upstream=\"profiles\"} 9",
       }) {
    EXPECT_TRUE(HasLine(text, line)) << line << "\nin:\n" << text;
  }
}

TEST(MetricsTest, ReplicaHealthHasAStateSeriesPerStateAndItsCounters) {
  hedge::EngineSnapshot engine = Busy();
  hedge::ReplicaSnapshot& a = engine.replicas[0];  // ejected
  a.circuit.ejections = {2, 1, 4};
  a.probes_passed = 3;
  a.probes_failed = 4;
  a.give_ups = 5;
  a.circuit.weight = 0;
  a.load.cost_seconds = 0.25;
  a.load.latency = absl::Milliseconds(125);
  engine.replicas[1].circuit.weight = 0.5;
  hedge::UpstreamSnapshot defaults;
  defaults.give_up_after = absl::Milliseconds(60);
  defaults.give_up_fallbacks = 6;
  defaults.coalesced_reads = 49;
  defaults.fetches_saved = 48;
  hedge::UpstreamSnapshot off;  // giving up is off
  off.name = "off";
  engine.upstreams = {defaults, off};
  const std::string text = RenderMetrics(engine, {});
  for (const char* line : {
           "tailgate_replica_state{upstream=\"\",replica=\"http://a:8001\","
           "state=\"serving\"} 0",
           "tailgate_replica_state{upstream=\"\",replica=\"http://a:8001\","
           "state=\"ejected\"} 1",
           "tailgate_replica_state{upstream=\"\",replica=\"http://a:8001\","
           "state=\"probing\"} 0",
           "tailgate_replica_state{upstream=\"\",replica=\"http://b:8002\","
           "state=\"probing\"} 1",
           "tailgate_ejections_total{upstream=\"\",replica=\"http://a:8001\","
           "reason=\"consecutive\"} 2",
           "tailgate_ejections_total{upstream=\"\",replica=\"http://a:8001\","
           "reason=\"failure_rate\"} 1",
           "tailgate_ejections_total{upstream=\"\",replica=\"http://a:8001\","
           "reason=\"probe\"} 4",
           "tailgate_probes_total{upstream=\"\",replica=\"http://a:8001\","
           "result=\"passed\"} 3",
           "tailgate_probes_total{upstream=\"\",replica=\"http://a:8001\","
           "result=\"failed\"} 4",
           "tailgate_give_ups_total{upstream=\"\",replica=\"http://a:8001\"} 5",
           "tailgate_replica_weight{upstream=\"\",replica=\"http://a:8001\"} 0",
           "tailgate_replica_weight{upstream=\"\",replica=\"http://b:8002\"} "
           "0.5",
           "tailgate_replica_cost_seconds{upstream=\"\",replica=\"http://"
           "a:8001\"} 0.25",
           "tailgate_replica_latency_seconds{upstream=\"\",replica=\"http://"
           "a:8001\"} 0.125",
           "tailgate_give_up_seconds{upstream=\"\"} 0.06",
           "tailgate_give_up_seconds{upstream=\"off\"} 0",
           "tailgate_give_up_fallbacks_total{upstream=\"\"} 6",
           "tailgate_coalesced_reads_total{upstream=\"\"} 49",
           "tailgate_coalesce_fetches_saved_total{upstream=\"\"} 48",
           "tailgate_coalesced_reads_total{upstream=\"off\"} 0",
           "tailgate_circuit_state{upstream=\"\",replica=\"http://a:8001\"} 1",
       }) {
    EXPECT_TRUE(HasLine(text, line)) << line << "\nin:\n" << text;
  }
}

TEST(MetricsTest, BackOffAndOverloadAnswersAreShownByReplica) {
  hedge::EngineSnapshot engine = Busy();
  hedge::ReplicaSnapshot& b = engine.replicas[1];
  b.backed_off = true;
  b.back_off_remaining = absl::Milliseconds(2500);
  b.overload_answers_429 = 7;
  b.overload_answers_503 = 3;
  engine.replicas[0].overload_answers_503 = 1;
  const std::string text = RenderMetrics(engine, {});
  for (const char* line : {
           "tailgate_replica_backed_off{upstream=\"\",replica=\"http://"
           "a:8001\"} 0",
           "tailgate_replica_backed_off{upstream=\"\",replica=\"http://"
           "b:8002\"} 1",
           "tailgate_replica_back_off_remaining_seconds{upstream=\"\","
           "replica=\"http://a:8001\"} 0",
           "tailgate_replica_back_off_remaining_seconds{upstream=\"\","
           "replica=\"http://b:8002\"} 2.5",
           "tailgate_replica_overload_answers_total{upstream=\"\",replica=\""
           "http://a:8001\",status=\"429\"} 0",
           "tailgate_replica_overload_answers_total{upstream=\"\",replica=\""
           "http://a:8001\",status=\"503\"} 1",
           "tailgate_replica_overload_answers_total{upstream=\"\",replica=\""
           "http://b:8002\",status=\"429\"} 7",
           "tailgate_replica_overload_answers_total{upstream=\"\",replica=\""
           "http://b:8002\",status=\"503\"} 3",
       }) {
    EXPECT_TRUE(HasLine(text, line)) << line << "\nin:\n" << text;
  }
}

TEST(MetricsTest, ClosedCircuitIsZero) {
  hedge::EngineSnapshot engine;
  engine.replicas = {Replica("http://c:1", hedge::CircuitState::kClosed, 0)};
  EXPECT_TRUE(HasLine(
      RenderMetrics(engine, {}),
      "tailgate_circuit_state{upstream=\"\",replica=\"http://c:1\"} 0"));
}

TEST(MetricsTest, HistogramBucketsAreCumulative) {
  const std::string text = RenderMetrics(Busy(), SomeRejections());
  // Requests: 1ms, 1ms, 30ms, 5s.
  for (const char* line : {
           "tailgate_request_duration_seconds_bucket{le=\"0.0005\"} 0",
           "tailgate_request_duration_seconds_bucket{le=\"0.001\"} 2",
           "tailgate_request_duration_seconds_bucket{le=\"0.025\"} 2",
           "tailgate_request_duration_seconds_bucket{le=\"0.035\"} 3",
           "tailgate_request_duration_seconds_bucket{le=\"2.5\"} 3",
           "tailgate_request_duration_seconds_bucket{le=\"+Inf\"} 4",
           "tailgate_request_duration_seconds_count 4",
           "tailgate_request_duration_seconds_sum 5.032",
           "tailgate_attempt_duration_seconds_bucket{upstream=\"\",replica="
           "\"http://"
           "a:8001\",le=\"0.05\"} 2",
           "tailgate_attempt_duration_seconds_count{upstream=\"\",replica="
           "\"http://b:8002\"} "
           "0",
       }) {
    EXPECT_TRUE(HasLine(text, line)) << line << "\nin:\n" << text;
  }
}

TEST(AmplificationTest, AttemptsPerRequestAndZeroBeforeAnyRequest) {
  EXPECT_EQ(Amplification(hedge::EngineSnapshot()), 0);
  EXPECT_DOUBLE_EQ(Amplification(Busy()), 1.2);
}

}  // namespace
}  // namespace tailgate::server
