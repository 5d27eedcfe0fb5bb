// The seed's experiment and its correlated variant: one sequential client,
// every read checked, baseline then hedged on a fresh sidecar each.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "experiment/closed_loop.h"
#include "experiment/latency_split.h"
#include "experiment/plots.h"
#include "experiment/policies.h"
#include "experiment/progress.h"
#include "experiment/replica_pair.h"
#include "experiment/report.h"
#include "experiment/scenarios.h"
#include "experiment/sidecar_session.h"
#include "experiment/workload.h"
#include "server/cpu_set.h"

namespace tailgate::experiment {

absl::Status RunStragglerScenario(const ExperimentConfig& config,
                                  const std::string& tailgate) {
  const bool correlated = config.scenario == Scenario::kCorrelated;
  const std::string scenario = ScenarioName(config.scenario);
  absl::StatusOr<std::unique_ptr<ReplicaPair>> replicas = ReplicaPair::Start(
      correlated ? StragglerMix::kCorrelated : StragglerMix::kSeed);
  if (!replicas.ok()) return replicas.status();
  const SidecarSetup setup =
      SetupFor(config, tailgate, (*replicas)->backends());

  std::vector<CdfSeries> curves;
  for (const Policy& policy : ComparedPolicies()) {
    Note(absl::StrCat(scenario, " ", policy.mode, ": ", config.requests,
                      " sequential reads after ", config.warmup,
                      " warm-up reads"));
    std::vector<SequentialRead> reads;
    std::string transport;  // as connected to, not as asked for
    absl::StatusOr<SidecarStats> metrics = MeasureOnFreshSidecar(
        setup, policy, [&](SidecarSession& session) -> absl::Status {
          transport =
              absl::StartsWith(session.process().grpc_address(), "unix:")
                  ? "unix"
                  : "tcp";
          Progress progress(absl::StrCat(scenario, " ", policy.mode),
                            config.requests);
          absl::StatusOr<std::vector<SequentialRead>> measured =
              RunSequentialReads(
                  session.client(), config.requests,
                  [](int64_t id) { return ReadPath(id); }, progress);
          if (!measured.ok()) return measured.status();
          reads = *std::move(measured);
          return absl::OkStatus();
        });
    if (!metrics.ok()) return metrics.status();

    std::vector<absl::Duration> latencies;
    latencies.reserve(reads.size());
    for (const SequentialRead& read : reads) latencies.push_back(read.latency);
    std::sort(latencies.begin(), latencies.end());
    JsonObject line;
    line.AddString("mode", policy.mode)
        .AddString("scenario", scenario)
        .AddInt("requests", config.requests)
        .AddInt("warmup", config.warmup)
        .AddString("sidecar_transport", transport)
        .AddString("sidecar_cpus",
                   config.sidecar_cpus.empty()
                       ? std::string("any")
                       : server::FormatCpuList(config.sidecar_cpus));
    AddLatencyFields(Summarize(latencies), line);
    line.AddDouble("attempts_per_request", AttemptsPerRequest(*metrics), 3)
        .AddObject("metrics", MetricsJson(*metrics));
    AddLatencySplitFields(SplitLatencies(reads), line);
    PrintLine(line);
    curves.push_back({policy.mode, std::move(latencies)});
  }

  if (config.plot_dir.empty()) return absl::OkStatus();
  return PlotLatencyCdf(
      config.plot_dir, scenario,
      absl::StrCat(scenario, ": latency CDF, ", config.requests,
                   " sequential reads per policy"),
      curves);
}

}  // namespace tailgate::experiment
