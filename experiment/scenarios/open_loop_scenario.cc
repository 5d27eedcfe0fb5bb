// Fixed-rate load at one offered rate or a sweep of them, the seed's
// straggler mix in its any-phase form (workload.h: reads reach the sidecar
// out of order and refusals shift its rotation), baseline then hedged at
// each rate on a fresh sidecar each.

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "experiment/config/policies.h"
#include "experiment/config/workload.h"
#include "experiment/load/open_loop.h"
#include "experiment/load/progress.h"
#include "experiment/measure/open_loop_report.h"
#include "experiment/replicas/replica_pair.h"
#include "experiment/report/plots.h"
#include "experiment/report/report.h"
#include "experiment/scenarios/scenarios.h"
#include "experiment/scenarios/sidecar_session.h"

namespace tailgate::experiment {
namespace {

JsonObject OpenLoopLine(const std::string& mode, const OpenLoopOptions& options,
                        const OpenLoopResult& result,
                        const SidecarStats& metrics, int64_t warmup) {
  JsonObject line;
  line.AddString("mode", mode)
      .AddString("scenario", "open_loop")
      .AddString("mix", "seed_any_phase")
      .AddDouble("offered_rps", options.rate, 1)
      .AddDouble("achieved_rps", result.AchievedRps(), 1)
      .AddDouble("duration_s", absl::ToDoubleSeconds(options.duration), 3);
  AddOpenLoopFields(result, line);
  line.AddDouble("attempts_per_request", AttemptsPerRequest(metrics), 3)
      .AddObject("metrics", MetricsJson(metrics))
      .AddInt("warmup", warmup);
  return line;
}

}  // namespace

absl::Status RunOpenLoopScenario(const ExperimentConfig& config,
                                 const std::string& tailgate) {
  absl::StatusOr<std::unique_ptr<ReplicaPair>> replicas =
      ReplicaPair::Start(StragglerMix::kSeedAnyPhase);
  if (!replicas.ok()) return replicas.status();
  const SidecarSetup setup =
      SetupFor(config, tailgate, (*replicas)->backends());

  std::vector<SweepPoint> points;
  std::vector<CdfSeries> curves;
  for (const double rate : config.rates) {
    for (const Policy& policy : ComparedPolicies()) {
      OpenLoopOptions options;
      options.rate = rate;
      options.duration = config.duration;
      Note(absl::StrCat("open_loop ", policy.mode, ": ", rate, " req/s for ",
                        absl::FormatDuration(config.duration)));
      OpenLoopResult result;
      absl::StatusOr<SidecarStats> metrics = MeasureOnFreshSidecar(
          setup, policy, [&](SidecarSession& session) -> absl::Status {
            Progress progress(
                absl::StrCat("open_loop ", policy.mode, " ", rate, " req/s"),
                static_cast<int64_t>(rate *
                                     absl::ToDoubleSeconds(config.duration)));
            result = RunOpenLoop(session.client(), options, progress);
            return WrongAnswerError(result);
          });
      if (!metrics.ok()) return metrics.status();

      const LatencySummary latency = Summarize(result.latencies);
      PrintLine(
          OpenLoopLine(policy.mode, options, result, *metrics, config.warmup));
      points.push_back({policy.mode, rate, result.AchievedRps(),
                        result.scheduled, result.ok, latency,
                        AttemptsPerRequest(*metrics)});
      if (!config.sweep) {
        curves.push_back({policy.mode, std::move(result.latencies)});
      }
    }
  }

  if (config.plot_dir.empty()) return absl::OkStatus();
  if (config.sweep) return PlotSweep(config.plot_dir, points);
  return PlotLatencyCdf(
      config.plot_dir, "open_loop",
      absl::StrCat("open loop at ", config.rates[0], " req/s for ",
                   absl::FormatDuration(config.duration),
                   ": latency CDF of ok reads, from the scheduled send"),
      curves);
}

}  // namespace tailgate::experiment
