// The fanout scenario's batches part: for one batch size, each arm on a
// fresh process reads the same --fanout_batches batches of random keys,
// one batch after another:
//   no_hedge  a hedging sidecar (5 ms), every read with hedge.disable
//   hedged    the same sidecar's per-key hedging, --hedge_delay=5ms
//   auto      --hedge_delay=auto
//   gateway   with --peer_gateway: the Go gateway hedging at 5 ms, each key
//             a GET of its own, kFanoutInFlight at once
// Each line: batch latency, attempts per key (the target's own counters)
// and the target's CPU per key (/proc/PID/stat around the measured
// batches, after the warm-up).

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "experiment/config/fanout_keys.h"
#include "experiment/config/policies.h"
#include "experiment/config/workload.h"
#include "experiment/load/grpc_batches.h"
#include "experiment/load/http_batches.h"
#include "experiment/load/progress.h"
#include "experiment/measure/gateway_metrics.h"
#include "experiment/measure/http_get.h"
#include "experiment/measure/process_usage.h"
#include "experiment/measure/prometheus_text.h"
#include "experiment/report/report.h"
#include "experiment/scenarios/fanout_parts.h"
#include "experiment/scenarios/sidecar_session.h"
#include "tests/process/child_process.h"
#include "tests/replica/silent_listener.h"

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kGatewayStartTimeout = absl::Seconds(10);
constexpr absl::Duration kScrapeTimeout = absl::Seconds(2);
// The gateway's per-read deadline (its -timeout is 1 s, as the sidecar's).
constexpr absl::Duration kGetDeadline = absl::Seconds(3);

const Policy& HedgedPolicy() { return StragglerPolicies()[1]; }
const Policy& AutoPolicy() { return StragglerPolicies()[2]; }

std::vector<std::string> BatchPaths(int64_t batch, int keys) {
  std::vector<std::string> paths;
  for (uint64_t id : FanoutBatchKeys(static_cast<uint64_t>(batch), keys)) {
    paths.push_back(ReadPath(id));
  }
  return paths;
}

// What an arm measured, besides its batches.
struct ArmFigures {
  double requests = 0;
  double attempts = 0;
  ProcessUsage cpu_before, cpu_after;
  std::optional<SidecarStats> stats;          // sidecars only
  std::string metrics_before, metrics_after;  // sidecars: Prometheus text
};

// Extra attempts wanted and not launched, by reason, and the hedge gauges
// at the end (sidecars): why an arm hedged less than its keys wanted.
JsonObject HedgeStateJson(const ArmFigures& figures) {
  JsonObject skipped;
  for (const char* reason : {"no_budget", "no_capacity", "no_replica",
                             "no_retry_budget", "no_tenant_budget"}) {
    const std::string label = absl::StrCat("reason=\"", reason, "\"");
    skipped.AddInt(reason,
                   static_cast<int64_t>(
                       SumSamples(figures.metrics_after,
                                  "tailgate_hedges_skipped_total", label) -
                       SumSamples(figures.metrics_before,
                                  "tailgate_hedges_skipped_total", label)));
  }
  JsonObject state;
  state.AddObject("skipped", skipped)
      .AddDouble("delay_ms_at_end",
                 1000 * SumSamples(figures.metrics_after,
                                   "tailgate_hedge_delay_seconds"),
                 3)
      .AddDouble("win_ratio_at_end",
                 SumSamples(figures.metrics_after, "tailgate_hedge_win_ratio"),
                 3)
      .AddDouble(
          "spend_ratio_at_end",
          SumSamples(figures.metrics_after, "tailgate_hedge_spend_ratio"), 3);
  return state;
}

void AddCommonFields(const FanoutRun& run, const std::string& arm, int keys,
                     BatchSeries& series, const ArmFigures& figures,
                     JsonObject& line) {
  series.Sort();
  const double count = static_cast<double>(series.keys);
  const absl::Duration cpu = figures.cpu_after.cpu - figures.cpu_before.cpu;
  line.AddString("scenario", "fanout")
      .AddString("part", "batches")
      .AddString("arm", arm)
      .AddInt("keys", keys)
      .AddInt("batches", run.config.fanout.batches)
      .AddInt("max_in_flight", kFanoutInFlight);
  AddLatencyFields(Summarize(series.batch_latencies), line, "batch_");
  // Each key from its batch's start: how long a fast key waits its turn.
  AddLatencyFields(Summarize(series.key_latencies), line, "key_");
  line.AddDouble("attempts_per_key",
                 figures.requests > 0 ? figures.attempts / figures.requests
                                      : std::nan(""),
                 4)
      .AddDouble("cpu_us_per_key", absl::ToDoubleMicroseconds(cpu) / count, 2);
}

absl::StatusOr<BatchSeries> SidecarArm(const FanoutRun& run,
                                       const std::string& arm, int keys,
                                       const Policy& policy,
                                       bool disable_hedging) {
  const SidecarSetup setup =
      SetupFor(run.config, run.tailgate, run.replicas.backends());
  BatchSeries series;
  ArmFigures figures;
  absl::StatusOr<SidecarStats> unused = MeasureOnFreshSidecar(
      setup, policy, [&](SidecarSession& session) -> absl::Status {
        absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
            ConnectChannel(session.read_address());
        if (!channel.ok()) return channel.status();
        ReadManyBatches target(
            *channel, {kFanoutInFlight, disable_hedging, kFanoutBatchDeadline});
        absl::Status warm = WarmUpTarget(target, keys);
        if (!warm.ok()) return warm;
        absl::StatusOr<SidecarStats> before = session.Stats();
        if (!before.ok()) return before.status();
        absl::StatusOr<MetricsText> text = session.Metrics();
        if (!text.ok()) return text.status();
        figures.metrics_before = std::move(text->text);
        absl::StatusOr<ProcessUsage> cpu =
            ReadProcessUsage(session.process().pid());
        if (!cpu.ok()) return cpu.status();
        figures.cpu_before = *cpu;
        absl::StatusOr<BatchSeries> measured =
            RunBatchSeries(target, absl::StrCat("fanout ", keys, " keys ", arm),
                           run.config.fanout.batches,
                           [keys](int64_t i) { return BatchPaths(i, keys); });
        if (!measured.ok()) return measured.status();
        series = *std::move(measured);
        cpu = ReadProcessUsage(session.process().pid());
        if (!cpu.ok()) return cpu.status();
        figures.cpu_after = *cpu;
        absl::StatusOr<SidecarStats> after = session.Stats();
        if (!after.ok()) return after.status();
        figures.stats = StatsDelta(*before, *after);
        text = session.Metrics();
        if (!text.ok()) return text.status();
        figures.metrics_after = std::move(text->text);
        return absl::OkStatus();
      });
  if (!unused.ok()) return unused.status();
  figures.requests = static_cast<double>(figures.stats->requests);
  figures.attempts = static_cast<double>(figures.stats->attempts);
  JsonObject line;
  AddCommonFields(run, arm, keys, series, figures, line);
  line.AddString("cpu_of", "sidecar")
      .AddDouble("item_attempts_per_key",
                 static_cast<double>(series.item_attempts) /
                     static_cast<double>(series.keys),
                 4)
      .AddBool("hedge_disable", disable_hedging)
      .AddObject("metrics", MetricsJson(*figures.stats))
      .AddObject("hedge", HedgeStateJson(figures))
      .AddString("sidecar_flags", absl::StrJoin(policy.flags, " "))
      .AddInt("warmup", run.config.warmup);
  PrintLine(line);
  return series;
}

absl::StatusOr<GatewayCounters> ScrapeGateway(const std::string& url) {
  absl::StatusOr<std::string> json = HttpGetBody(url, kScrapeTimeout);
  if (!json.ok()) return json.status();
  return ParseGatewayMetrics(*json);
}

absl::StatusOr<BatchSeries> GatewayArm(const FanoutRun& run, int keys) {
  const std::vector<std::string> flags = {"-hedge-delay", "5ms",
                                          "-hedge-fraction", "0.25"};
  absl::StatusOr<int> port = testing::UnusedLoopbackPort();
  if (!port.ok()) return port.status();
  absl::StatusOr<int> admin_port = testing::UnusedLoopbackPort();
  if (!admin_port.ok()) return admin_port.status();
  const char* base = std::getenv("TEST_TMPDIR");
  const std::string log =
      absl::StrCat(base != nullptr ? base : "/tmp", "/tailgate-fanout-gateway-",
                   getpid(), ".log");
  absl::Cleanup remove_log = [&log] {
    std::error_code ignored;
    std::filesystem::remove(log, ignored);
  };
  std::vector<std::string> argv = {run.config.peer_gateway,
                                   "-backends",
                                   run.replicas.backends(),
                                   "-listen",
                                   absl::StrCat("127.0.0.1:", *port),
                                   "-admin",
                                   absl::StrCat("127.0.0.1:", *admin_port)};
  argv.insert(argv.end(), flags.begin(), flags.end());
  absl::StatusOr<std::unique_ptr<testing::ChildProcess>> gateway =
      testing::ChildProcess::Start(testing::LoggedTo(argv, log));
  if (!gateway.ok()) return gateway.status();
  if (!testing::WaitForPort(*port, kGatewayStartTimeout) ||
      !testing::WaitForPort(*admin_port, kGatewayStartTimeout)) {
    return absl::UnavailableError(absl::StrCat("the gateway did not listen: ",
                                               testing::ReadWholeFile(log)));
  }
  const std::string metrics_url =
      absl::StrCat("http://127.0.0.1:", *admin_port, "/metrics");
  BatchSeries series;
  ArmFigures figures;
  {
    absl::StatusOr<std::unique_ptr<HttpReadTarget>> reads =
        HttpReadTarget::Start(absl::StrCat("http://127.0.0.1:", *port));
    if (!reads.ok()) return reads.status();
    HttpBatches target(**reads, kFanoutInFlight, kGetDeadline);
    absl::Status warm = WarmUpTarget(target, keys);
    if (!warm.ok()) return warm;
    absl::StatusOr<GatewayCounters> before = ScrapeGateway(metrics_url);
    if (!before.ok()) return before.status();
    absl::StatusOr<ProcessUsage> cpu = ReadProcessUsage((*gateway)->pid());
    if (!cpu.ok()) return cpu.status();
    figures.cpu_before = *cpu;
    absl::StatusOr<BatchSeries> measured =
        RunBatchSeries(target, absl::StrCat("fanout ", keys, " keys gateway"),
                       run.config.fanout.batches,
                       [keys](int64_t i) { return BatchPaths(i, keys); });
    if (!measured.ok()) return measured.status();
    series = *std::move(measured);
    cpu = ReadProcessUsage((*gateway)->pid());
    if (!cpu.ok()) return cpu.status();
    figures.cpu_after = *cpu;
    absl::StatusOr<GatewayCounters> after = ScrapeGateway(metrics_url);
    if (!after.ok()) return after.status();
    figures.requests = static_cast<double>(after->requests - before->requests);
    figures.attempts = static_cast<double>(after->attempts - before->attempts);
  }
  const int code = (*gateway)->Stop();
  if (code != 0) {
    return absl::InternalError(
        absl::StrCat("the gateway exited with ", code, " when stopped"));
  }
  JsonObject line;
  AddCommonFields(run, "gateway", keys, series, figures, line);
  line.AddString("cpu_of", "gateway")
      .AddString("gateway_flags", absl::StrJoin(flags, " "));
  PrintLine(line);
  return series;
}

double P99Ratio(const BatchSeries& arm, const BatchSeries& baseline) {
  const absl::Duration base = Summarize(baseline.batch_latencies).p99;
  return base > absl::ZeroDuration()
             ? absl::FDivDuration(Summarize(arm.batch_latencies).p99, base)
             : std::nan("");
}

}  // namespace

absl::StatusOr<std::vector<CdfSeries>> RunFanoutBatches(const FanoutRun& run,
                                                        int keys) {
  Note(absl::StrCat("fanout: ", run.config.fanout.batches, " batches of ", keys,
                    " keys per arm"));
  struct Arm {
    std::string name;
    BatchSeries series;
  };
  std::vector<Arm> arms;
  for (const auto& [name, policy, disable] :
       {std::tuple<const char*, const Policy&, bool>{"no_hedge", HedgedPolicy(),
                                                     true},
        {"hedged", HedgedPolicy(), false},
        {"auto", AutoPolicy(), false}}) {
    absl::StatusOr<BatchSeries> series =
        SidecarArm(run, name, keys, policy, disable);
    if (!series.ok()) return series.status();
    arms.push_back({name, *std::move(series)});
  }
  if (!run.config.peer_gateway.empty()) {
    absl::StatusOr<BatchSeries> series = GatewayArm(run, keys);
    if (!series.ok()) return series.status();
    arms.push_back({"gateway", *std::move(series)});
  }
  JsonObject summary;
  summary.AddString("scenario", "fanout")
      .AddString("summary", "batches")
      .AddInt("keys", keys);
  for (size_t i = 1; i < arms.size(); ++i) {
    summary.AddDouble(absl::StrCat(arms[i].name, "_p99_over_no_hedge"),
                      P99Ratio(arms[i].series, arms[0].series), 3);
  }
  PrintLine(summary);
  std::vector<CdfSeries> curves;
  for (Arm& arm : arms) {
    curves.push_back({arm.name, std::move(arm.series.batch_latencies)});
  }
  return curves;
}

}  // namespace tailgate::experiment
