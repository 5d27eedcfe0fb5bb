// Chaos: reads at a steady rate through one sidecar while replica A is
// killed and restarted on the same port, again and again, and replica B
// stays up. The goal is that every read still answers, with the right
// body: a read whose attempt meets the dying replica must be saved by its
// fallback on B, and the circuit must open, probe and close around each
// outage.
//
// Each arm (--chaos_arms) runs on a fresh sidecar, one after the other,
// with the same reads and the same kill schedule: "defaults" must lose no
// read (the run fails otherwise); "no_retry_budget" shows what the same
// outages cost when no fallback is paid for, and may lose reads. A wrong
// body fails the run in any arm.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "experiment/config/policies.h"
#include "experiment/config/workload.h"
#include "experiment/load/open_loop.h"
#include "experiment/load/progress.h"
#include "experiment/measure/open_loop_report.h"
#include "experiment/measure/prometheus_text.h"
#include "experiment/replicas/flapping_replica.h"
#include "experiment/replicas/replica_pair.h"
#include "experiment/report/chaos_timeline.h"
#include "experiment/report/plots.h"
#include "experiment/report/report.h"
#include "experiment/scenarios/scenarios.h"
#include "experiment/scenarios/sidecar_session.h"

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
const Policy& DefaultsPolicy() {
  static const auto* const policy = new Policy{
      "chaos",
      {"--hedge_delay=5ms", "--failure_threshold=2", "--cooldown=100ms"}};
  return *policy;
}

// The same with no retry credit at all: every failure fallback is refused
// (skipped_no_retry_budget), so a read whose primary meets the dying
// replica fails unless a timer hedge already runs on B. The state a
// fallback was in, before fallbacks had a budget of their own, whenever
// the hedges had spent the balance both shared.
const Policy& NoRetryBudgetPolicy() {
  static const auto* const policy = new Policy{
      "chaos_no_retry_budget",
      {"--hedge_delay=5ms", "--failure_threshold=2", "--cooldown=100ms",
       "--retry_fraction=0", "--retry_per_second=0"}};
  return *policy;
}

const Policy& PolicyOf(ChaosArm arm) {
  switch (arm) {
    case ChaosArm::kDefaults:
      return DefaultsPolicy();
    case ChaosArm::kNoRetryBudget:
      return NoRetryBudgetPolicy();
  }
  return DefaultsPolicy();
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
  ChaosArm arm = ChaosArm::kDefaults;
  OpenLoopResult reads;
  FlapCount flaps;
  Snapshot before;
  Snapshot after;
  std::string sidecar_log;  // its stderr: the event=replica_state lines
  std::vector<FallbackSample> fallback_samples;
};

int64_t CounterDelta(const ChaosRun& run, absl::string_view name,
                     absl::string_view label) {
  return static_cast<int64_t>(SumSamples(run.after.metrics, name, label) -
                              SumSamples(run.before.metrics, name, label));
}

// The state a "event=replica_state ... to=STATE ..." log line moved to;
// empty for any other line.
absl::string_view ReplicaStateTarget(absl::string_view line) {
  if (!absl::StrContains(line, " event=replica_state ")) return "";
  const size_t to = line.find(" to=");
  if (to == absl::string_view::npos) return "";
  absl::string_view state = line.substr(to + 4);
  return state.substr(0, state.find(' '));
}

// Every transition (serving, ejected, probing) bumps its replica's
// generation; the log says when a replica was ejected and when it came
// back, not each probe.
JsonObject CircuitJson(const ChaosRun& run) {
  uint64_t transitions = 0;
  for (size_t i = 0; i < run.after.stats.replicas.size(); ++i) {
    transitions += run.after.stats.replicas[i].generation -
                   run.before.stats.replicas[i].generation;
  }
  int64_t ejected = 0, back = 0;
  for (absl::string_view line : absl::StrSplit(run.sidecar_log, '\n')) {
    const absl::string_view target = ReplicaStateTarget(line);
    ejected += target == "ejected";
    back += target == "serving";
  }
  JsonObject circuit;
  circuit.AddUint("transitions", transitions)
      .AddInt("logged_ejected", ejected)
      .AddInt("logged_back", back);
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

ChaosTimeline TimelineOf(const ExperimentConfig& config, const ChaosRun& run) {
  return BucketChaosRun(ChaosArmName(run.arm), kChaosBucket, config.duration,
                        run.reads.failure_times, run.fallback_samples,
                        run.flaps.kill_times, run.flaps.restart_times);
}

JsonObject ChaosLine(const ExperimentConfig& config, const ChaosRun& run,
                     const SidecarStats& metrics) {
  const Policy& policy = PolicyOf(run.arm);
  JsonObject line;
  line.AddString("mode", policy.mode)
      .AddString("arm", ChaosArmName(run.arm))
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
      .AddObject("timeline", TimelineJson(TimelineOf(config, run)))
      .AddString("sidecar_flags", absl::StrJoin(policy.flags, " "))
      .AddInt("warmup", config.warmup);
  return line;
}

absl::StatusOr<FallbackCounts> ReadFallbackCounts(SidecarSession& session) {
  absl::StatusOr<MetricsText> metrics = session.Metrics();
  if (!metrics.ok()) return metrics.status();
  FallbackCounts counts;
  counts.taken = static_cast<int64_t>(SumSamples(
      metrics->text, "tailgate_attempts_total", "kind=\"fallback\""));
  counts.refused = static_cast<int64_t>(
      SumSamples(metrics->text, "tailgate_hedges_skipped_total",
                 "reason=\"no_retry_budget\""));
  return counts;
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
  Progress progress(absl::StrCat("chaos ", ChaosArmName(run.arm)),
                    static_cast<int64_t>(options.rate * absl::ToDoubleSeconds(
                                                            options.duration)));
  // Started back to back: their clocks agree to well within a bucket.
  FallbackSampler sampler([&session] { return ReadFallbackCounts(session); },
                          kChaosBucket);
  flapping.StartFlapping(config.replica_up, config.replica_down);
  run.reads = RunOpenLoop(session.client(), options, progress);
  absl::StatusOr<FlapCount> flaps = flapping.StopFlapping();
  if (!flaps.ok()) return flaps.status();
  run.flaps = *std::move(flaps);
  absl::StatusOr<std::vector<FallbackSample>> samples = sampler.Stop();
  if (!samples.ok()) return samples.status();
  run.fallback_samples = *std::move(samples);

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

// What fails the run: a wrong body in any arm, a failed read in the
// defaults arm. The comparison arm is there to lose reads.
absl::Status Verdict(const ChaosRun& run) {
  if (run.arm == ChaosArm::kDefaults) {
    absl::Status failed = FailedReadsError(run.reads);
    if (failed.ok()) return failed;
    return absl::Status(failed.code(),
                        absl::StrCat("defaults: ", failed.message()));
  }
  absl::Status wrong = WrongAnswerError(run.reads);
  if (wrong.ok()) return wrong;
  return absl::Status(
      wrong.code(), absl::StrCat(ChaosArmName(run.arm), ": ", wrong.message()));
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

  std::vector<std::string> arm_names;
  for (ChaosArm arm : config.chaos_arms) arm_names.push_back(ChaosArmName(arm));
  Note(absl::StrCat(
      "chaos: ", config.rates[0], " req/s for ",
      absl::FormatDuration(config.duration), " per arm (",
      absl::StrJoin(arm_names, ", "), "); replica A killed for ",
      absl::FormatDuration(config.replica_down), " every ",
      absl::FormatDuration(config.replica_up + config.replica_down)));
  absl::Status verdict;
  std::vector<ChaosTimeline> timelines;
  for (ChaosArm arm : config.chaos_arms) {
    ChaosRun run;
    run.arm = arm;
    absl::StatusOr<SidecarStats> metrics = MeasureOnFreshSidecar(
        setup, PolicyOf(arm), [&](SidecarSession& session) {
          return MeasureChaos(config, **a, session, run);
        });
    if (!metrics.ok()) return metrics.status();
    PrintLine(ChaosLine(config, run, *metrics));
    timelines.push_back(TimelineOf(config, run));
    if (arm != ChaosArm::kDefaults && Failures(run.reads) > 0) {
      Note(absl::StrCat("chaos: ", ChaosArmName(arm), " lost ",
                        Failures(run.reads), " of ", run.reads.sent,
                        " reads (the comparison; not a failure of the run)"));
    }
    verdict.Update(Verdict(run));
  }
  if (!config.plot_dir.empty()) {
    absl::Status plotted = PlotChaosTimeline(
        config.plot_dir,
        absl::StrCat(
            "chaos: ", config.rates[0], " reads/s, replica A down ",
            absl::FormatDuration(config.replica_down), " of every ",
            absl::FormatDuration(config.replica_up + config.replica_down)),
        timelines);
    if (!plotted.ok()) return plotted;
  }
  return verdict;
}

}  // namespace tailgate::experiment
