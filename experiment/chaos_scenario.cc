// Chaos: reads at a steady rate through one sidecar while replica A is
// killed and restarted on the same port, again and again, and replica B
// stays up. The goal is that every read still answers, with the right
// body: a read whose attempt meets the dying replica must be saved by its
// fallback on B, and the circuit must open, probe and close around each
// outage.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "experiment/flapping_replica.h"
#include "experiment/open_loop.h"
#include "experiment/open_loop_report.h"
#include "experiment/policies.h"
#include "experiment/progress.h"
#include "experiment/prometheus_text.h"
#include "experiment/replica_pair.h"
#include "experiment/report.h"
#include "experiment/scenarios.h"
#include "experiment/sidecar_session.h"
#include "experiment/workload.h"

namespace tailgate::experiment {
namespace {

// What an operator would set for replicas that come and go: hedge after
// 5 ms, open a circuit after two failures in a row and probe again after
// 100 ms, so that replica A rejoins after each restart. Every budget is the
// sidecar's default: hedge credits 0.1 per read with 2 banked, and the
// retry budget for failure fallbacks (0.2 per read over 10 s, plus 10 per
// second). The straggler mix wants a timer hedge for more reads than the
// hedge credits pay for, so the hedges keep that balance near zero; the
// fallbacks of the reads that meet A as it dies draw on the retry budget
// and are never starved by them.
const Policy& ChaosPolicy() {
  static const auto* const policy = new Policy{
      "chaos",
      {"--hedge_delay=5ms", "--failure_threshold=2", "--cooldown=100ms"}};
  return *policy;
}

// The sidecar's counters at one moment, both views.
struct Snapshot {
  SidecarStats stats;
  std::string metrics;  // Prometheus text
};

absl::StatusOr<Snapshot> TakeSnapshot(SidecarSession& session) {
  absl::StatusOr<SidecarStats> stats = session.Stats();
  if (!stats.ok()) return stats.status();
  absl::StatusOr<MetricsText> metrics = session.Metrics();
  if (!metrics.ok()) return metrics.status();
  return Snapshot{*std::move(stats), std::move(metrics->text)};
}

struct ChaosRun {
  OpenLoopResult reads;
  FlapCount flaps;
  Snapshot before;
  Snapshot after;
  std::string sidecar_log;  // its stderr: the event=circuit lines
};

int64_t CounterDelta(const ChaosRun& run, absl::string_view name,
                     absl::string_view label) {
  return static_cast<int64_t>(SumSamples(run.after.metrics, name, label) -
                              SumSamples(run.before.metrics, name, label));
}

// The state a "event=circuit ... to=STATE ..." log line moved to; empty
// for any other line.
absl::string_view CircuitTarget(absl::string_view line) {
  if (!absl::StrContains(line, " event=circuit ")) return "";
  const size_t to = line.find(" to=");
  if (to == absl::string_view::npos) return "";
  absl::string_view state = line.substr(to + 4);
  return state.substr(0, state.find(' '));
}

// Every transition bumps its replica's circuit generation, and logs a line
// saying where it went.
JsonObject CircuitJson(const ChaosRun& run) {
  uint64_t transitions = 0;
  for (size_t i = 0; i < run.after.stats.replicas.size(); ++i) {
    transitions += run.after.stats.replicas[i].generation -
                   run.before.stats.replicas[i].generation;
  }
  int64_t opened = 0, half_opened = 0, closed = 0;
  for (absl::string_view line : absl::StrSplit(run.sidecar_log, '\n')) {
    const absl::string_view target = CircuitTarget(line);
    opened += target == "open";
    half_opened += target == "half_open";
    closed += target == "closed";
  }
  JsonObject circuit;
  circuit.AddUint("transitions", transitions)
      .AddInt("logged_to_open", opened)
      .AddInt("logged_to_half_open", half_opened)
      .AddInt("logged_to_closed", closed);
  return circuit;
}

JsonObject ExtraAttemptsJson(const ChaosRun& run) {
  JsonObject extra;
  extra
      .AddInt("timer_hedges",
              CounterDelta(run, "tailgate_attempts_total", "kind=\"hedge\""))
      .AddInt("fallbacks",
              CounterDelta(run, "tailgate_attempts_total", "kind=\"fallback\""))
      .AddUint("wins",
               run.after.stats.hedge_wins - run.before.stats.hedge_wins);
  for (const char* reason :
       {"no_replica", "no_capacity", "no_budget", "no_retry_budget"}) {
    extra.AddInt(absl::StrCat("skipped_", reason),
                 CounterDelta(run, "tailgate_hedges_skipped_total",
                              absl::StrCat("reason=\"", reason, "\"")));
  }
  return extra;
}

int64_t Failures(const OpenLoopResult& reads) {
  return reads.failed + reads.rejected;
}

JsonObject ChaosLine(const ExperimentConfig& config, const ChaosRun& run,
                     const SidecarStats& metrics) {
  JsonObject line;
  line.AddString("mode", ChaosPolicy().mode)
      .AddString("scenario", "chaos")
      .AddDouble("offered_rps", config.rates[0], 1)
      .AddDouble("duration_s", absl::ToDoubleSeconds(config.duration), 3)
      .AddMillis("replica_down_ms", config.replica_down)
      .AddMillis("replica_up_ms", config.replica_up)
      .AddInt("kills", run.flaps.kills)
      .AddInt("restarts", run.flaps.restarts)
      .AddInt("reads", run.reads.sent)
      .AddInt("failures", Failures(run.reads))
      .AddInt("body_mismatches", run.reads.wrong_answers);
  AddOpenLoopFields(run.reads, line);
  line.AddObject("extra_attempts", ExtraAttemptsJson(run))
      .AddObject("circuit", CircuitJson(run))
      .AddDouble("attempts_per_request", AttemptsPerRequest(metrics), 3)
      .AddObject("metrics", MetricsJson(metrics))
      .AddString("sidecar_flags", absl::StrJoin(ChaosPolicy().flags, " "))
      .AddInt("warmup", config.warmup);
  return line;
}

// The reads, with replica A flapping for exactly as long as they are sent.
absl::Status MeasureChaos(const ExperimentConfig& config,
                          FlappingReplica& flapping, SidecarSession& session,
                          ChaosRun& run) {
  absl::StatusOr<Snapshot> before = TakeSnapshot(session);
  if (!before.ok()) return before.status();
  run.before = *std::move(before);

  OpenLoopOptions options;
  options.rate = config.rates[0];
  options.duration = config.duration;
  Progress progress(
      "chaos", static_cast<int64_t>(options.rate *
                                    absl::ToDoubleSeconds(options.duration)));
  flapping.StartFlapping(config.replica_up, config.replica_down);
  run.reads = RunOpenLoop(session.client(), options, progress);
  absl::StatusOr<FlapCount> flaps = flapping.StopFlapping();
  if (!flaps.ok()) return flaps.status();
  run.flaps = *flaps;

  absl::StatusOr<Snapshot> after = TakeSnapshot(session);
  if (!after.ok()) return after.status();
  run.after = *std::move(after);
  run.sidecar_log = session.process().stderr_text();
  return absl::OkStatus();
}

absl::Status FailedReadsError(const OpenLoopResult& reads) {
  if (Failures(reads) == 0) return WrongAnswerError(reads);
  return absl::InternalError(
      absl::StrCat(Failures(reads), " of ", reads.sent, " reads failed (",
                   reads.rejected, " rejected) while replica A flapped",
                   reads.failure_notes.empty() ? "" : "; the first ones: ",
                   absl::StrJoin(reads.failure_notes, "; ")));
}

}  // namespace

absl::Status RunChaosScenario(const ExperimentConfig& config,
                              const std::string& tailgate) {
  absl::StatusOr<std::unique_ptr<testing::Replica>> b =
      StartWorkloadReplica(StragglerMix::kSeed, ReplicaName::kB);
  if (!b.ok()) return b.status();
  absl::StatusOr<std::unique_ptr<FlappingReplica>> a =
      FlappingReplica::Start([](int port) {
        return StartWorkloadReplica(StragglerMix::kSeed, ReplicaName::kA, port);
      });
  if (!a.ok()) return a.status();
  const SidecarSetup setup =
      SetupFor(config, tailgate, absl::StrCat((*a)->url(), ",", (*b)->url()));

  Note(absl::StrCat(
      "chaos: ", config.rates[0], " req/s for ",
      absl::FormatDuration(config.duration), "; replica A killed for ",
      absl::FormatDuration(config.replica_down), " every ",
      absl::FormatDuration(config.replica_up + config.replica_down)));
  ChaosRun run;
  absl::StatusOr<SidecarStats> metrics =
      MeasureOnFreshSidecar(setup, ChaosPolicy(), [&](SidecarSession& session) {
        return MeasureChaos(config, **a, session, run);
      });
  if (!metrics.ok()) return metrics.status();
  PrintLine(ChaosLine(config, run, *metrics));
  return FailedReadsError(run.reads);
}

}  // namespace tailgate::experiment
