// The sequential scenarios: the seed's experiment, its correlated variant
// and the shifting workload. One sequential client, every read checked;
// baseline, hedged (fixed 5 ms) and auto (learned delay) each on a fresh
// sidecar, one after the other.
//
// The reads go in chunks of kChunkReads; after each chunk the sidecar's
// counters and hedge delay are read (Admin.GetMetrics), for the timeline
// plot and for the "adapted" figures: those of the second half of the run,
// when a learned delay and the payoff gate have settled.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cpus/cpu_set.h"
#include "experiment/config/policies.h"
#include "experiment/config/workload.h"
#include "experiment/load/closed_loop.h"
#include "experiment/load/progress.h"
#include "experiment/measure/latency_split.h"
#include "experiment/measure/prometheus_text.h"
#include "experiment/replicas/replica_pair.h"
#include "experiment/report/percentiles.h"
#include "experiment/report/plots.h"
#include "experiment/report/report.h"
#include "experiment/scenarios/scenarios.h"
#include "experiment/scenarios/sidecar_session.h"

namespace tailgate::experiment {
namespace {

constexpr int64_t kChunkReads = 100;

StragglerMix MixOf(Scenario scenario) {
  switch (scenario) {
    case Scenario::kCorrelated:
      return StragglerMix::kCorrelated;
    case Scenario::kShifting:
      return StragglerMix::kShifting;
    default:
      return StragglerMix::kSeed;
  }
}

// The sidecar's totals and the default set's hedge delay, at one moment.
struct Checkpoint {
  double requests = 0;
  double attempts = 0;
  absl::Duration hedge_delay;
};

absl::StatusOr<Checkpoint> TakeCheckpoint(SidecarSession& session) {
  absl::StatusOr<MetricsText> metrics = session.Metrics();
  if (!metrics.ok()) return metrics.status();
  Checkpoint checkpoint;
  checkpoint.requests = SumSamples(metrics->text, "tailgate_requests_total");
  checkpoint.attempts = SumSamples(metrics->text, "tailgate_attempts_total");
  checkpoint.hedge_delay = absl::Seconds(
      SumSamples(metrics->text, "tailgate_hedge_delay_seconds"));
  return checkpoint;
}

double AttemptsPerRead(const Checkpoint& from, const Checkpoint& to) {
  const double reads = to.requests - from.requests;
  return reads > 0 ? (to.attempts - from.attempts) / reads : 0;
}

// What one policy's run measured.
struct PolicyRun {
  std::vector<SequentialRead> reads;
  PolicyTimeline timeline;
  Checkpoint start, half, end;
};

absl::Status MeasureInChunks(const ExperimentConfig& config,
                             const std::string& label,
                             SidecarSession& session, PolicyRun& run) {
  const int64_t count = config.requests;
  const bool shifting = config.scenario == Scenario::kShifting;
  const auto path = [count, shifting](int64_t index) {
    return ReadPath(shifting ? ShiftingReadId(index, count)
                             : static_cast<uint64_t>(index));
  };
  Progress progress(label, count);
  absl::StatusOr<Checkpoint> previous = TakeCheckpoint(session);
  if (!previous.ok()) return previous.status();
  run.start = *previous;
  run.half = *previous;
  for (int64_t first = 0; first < count; first += kChunkReads) {
    const int64_t n = std::min(kChunkReads, count - first);
    absl::StatusOr<std::vector<SequentialRead>> chunk =
        RunSequentialReads(session.client(), n, path, progress, first);
    if (!chunk.ok()) return chunk.status();
    absl::StatusOr<Checkpoint> now = TakeCheckpoint(session);
    if (!now.ok()) return now.status();
    std::vector<absl::Duration> latencies;
    for (const SequentialRead& read : *chunk) {
      latencies.push_back(read.latency);
      run.reads.push_back(read);
    }
    std::sort(latencies.begin(), latencies.end());
    run.timeline.chunks.push_back({first, Summarize(latencies).p99,
                                   now->hedge_delay,
                                   AttemptsPerRead(*previous, *now)});
    if (first + n <= count / 2) run.half = *now;
    previous = now;
  }
  run.end = *previous;
  return absl::OkStatus();
}

std::vector<absl::Duration> SortedLatencies(
    const std::vector<SequentialRead>& reads, size_t from = 0) {
  std::vector<absl::Duration> latencies;
  for (size_t i = from; i < reads.size(); ++i) {
    latencies.push_back(reads[i].latency);
  }
  std::sort(latencies.begin(), latencies.end());
  return latencies;
}

}  // namespace

absl::Status RunStragglerScenario(const ExperimentConfig& config,
                                  const std::string& tailgate) {
  const std::string scenario = ScenarioName(config.scenario);
  absl::StatusOr<std::unique_ptr<ReplicaPair>> replicas =
      ReplicaPair::Start(MixOf(config.scenario));
  if (!replicas.ok()) return replicas.status();
  const SidecarSetup setup =
      SetupFor(config, tailgate, (*replicas)->backends());

  std::vector<CdfSeries> curves;
  std::vector<PolicyTimeline> timelines;
  for (const Policy& policy : StragglerPolicies()) {
    Note(absl::StrCat(scenario, " ", policy.mode, ": ", config.requests,
                      " sequential reads after ", config.warmup,
                      " warm-up reads"));
    PolicyRun run;
    run.timeline.mode = policy.mode;
    std::string transport;  // as connected to, not as asked for
    absl::StatusOr<SidecarStats> metrics = MeasureOnFreshSidecar(
        setup, policy, [&](SidecarSession& session) -> absl::Status {
          transport = absl::StartsWith(session.read_address(), "unix:") ? "unix"
                                                                        : "tcp";
          return MeasureInChunks(config,
                                 absl::StrCat(scenario, " ", policy.mode),
                                 session, run);
        });
    if (!metrics.ok()) return metrics.status();

    std::vector<absl::Duration> latencies = SortedLatencies(run.reads);
    JsonObject line;
    line.AddString("mode", policy.mode)
        .AddString("scenario", scenario)
        .AddInt("requests", config.requests)
        .AddInt("warmup", config.warmup)
        .AddString("sidecar_transport", transport)
        .AddString("sidecar_door", SidecarDoorName(config.sidecar_door))
        .AddString("sidecar_cpus",
                   config.sidecar_cpus.empty()
                       ? std::string("any")
                       : server::FormatCpuList(config.sidecar_cpus));
    AddLatencyFields(Summarize(latencies), line);
    line.AddDouble("attempts_per_request", AttemptsPerRequest(*metrics), 3)
        .AddObject("metrics", MetricsJson(*metrics));
    AddLatencySplitFields(SplitLatencies(run.reads), line);
    // The second half of the run: a learned delay has settled by then.
    AddLatencyFields(Summarize(SortedLatencies(run.reads, run.reads.size() / 2)),
                     line, "adapted_");
    line.AddDouble("adapted_attempts_per_request",
                   AttemptsPerRead(run.half, run.end), 3)
        .AddDouble("hedge_delay_ms_at_end",
                   absl::ToDoubleMilliseconds(run.end.hedge_delay), 3);
    PrintLine(line);
    curves.push_back({policy.mode, std::move(latencies)});
    timelines.push_back(std::move(run.timeline));
  }

  if (config.plot_dir.empty()) return absl::OkStatus();
  absl::Status cdf = PlotLatencyCdf(
      config.plot_dir, scenario,
      absl::StrCat(scenario, ": latency CDF, ", config.requests,
                   " sequential reads per policy"),
      curves);
  if (!cdf.ok()) return cdf;
  return PlotTimeline(
      config.plot_dir, scenario,
      absl::StrCat(scenario, ": per ", kChunkReads,
                   " reads, p99 and hedge delay (top), attempts per read "
                   "(bottom)"),
      timelines);
}

}  // namespace tailgate::experiment
