// Overload: one sidecar with a small admission limit (--max_requests=16),
// offered a quiet load, then far more than it can serve, then the quiet
// load again. What it shows: how many reads were admitted and how many
// refused, how fast a refusal comes back, what overload does to the
// latency of the reads it admits (against the quiet phases of the same
// sidecar in the same run), whether its memory stays bounded (VmRSS
// sampled throughout, VmHWM at the end), and whether it is healthy after.

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "experiment/config/policies.h"
#include "experiment/config/workload.h"
#include "experiment/load/open_loop.h"
#include "experiment/load/progress.h"
#include "experiment/measure/open_loop_report.h"
#include "experiment/measure/peak_rss.h"
#include "experiment/measure/rss_sampler.h"
#include "experiment/replicas/replica_pair.h"
#include "experiment/report/percentiles.h"
#include "experiment/report/report.h"
#include "experiment/scenarios/scenarios.h"
#include "experiment/scenarios/sidecar_health.h"
#include "experiment/scenarios/sidecar_session.h"

namespace tailgate::experiment {
namespace {

constexpr int kMaxRequests = 16;
// Well below the capacity of a 16-read sidecar on this box: the yardstick.
constexpr double kQuietRate = 500;
constexpr absl::Duration kRssInterval = absl::Milliseconds(250);
// How long the health check waits for the loaded connection to serve.
constexpr absl::Duration kRecoveryLimit = absl::Seconds(30);

// The experiment's hedged policy, with a small admission limit.
Policy OverloadPolicy() {
  Policy policy = ComparedPolicies().back();
  policy.flags.push_back(absl::StrCat("--max_requests=", kMaxRequests));
  return policy;
}

struct Phase {
  const char* name;
  double rate;
  OpenLoopResult reads;
  int64_t rss_kib_at_end = 0;
};

struct OverloadRun {
  std::vector<Phase> phases;  // quiet_before, overload, quiet_after
  RssSeries rss;
  int64_t vm_hwm_kib = 0;
  SidecarHealth health;  // right after the last phase
};

absl::StatusOr<Phase> RunPhase(const char* name, double rate,
                               absl::Duration duration,
                               SidecarSession& session) {
  Note(absl::StrCat("overload ", name, ": ", rate, " req/s for ",
                    absl::FormatDuration(duration)));
  OpenLoopOptions options;
  options.rate = rate;
  options.duration = duration;
  Progress progress(
      absl::StrCat("overload ", name),
      static_cast<int64_t>(rate * absl::ToDoubleSeconds(duration)));
  Phase phase{name, rate, RunOpenLoop(session.client(), options, progress)};
  absl::Status answers = WrongAnswerError(phase.reads);
  if (!answers.ok()) return answers;
  absl::StatusOr<int64_t> rss = ResidentKib(session.process().pid());
  if (!rss.ok()) return rss.status();
  phase.rss_kib_at_end = *rss;
  return phase;
}

absl::Status MeasureOverload(const ExperimentConfig& config,
                             SidecarSession& session, OverloadRun& run) {
  const pid_t pid = session.process().pid();
  RssSampler sampler(pid, kRssInterval);
  const std::pair<const char*, double> phases[] = {
      {"quiet_before", kQuietRate},
      {"overload", config.rates[0]},
      {"quiet_after", kQuietRate}};
  for (const auto& [name, rate] : phases) {
    absl::StatusOr<Phase> phase =
        RunPhase(name, rate, config.duration, session);
    if (!phase.ok()) return phase.status();
    run.phases.push_back(*std::move(phase));
  }
  absl::StatusOr<RssSeries> rss = sampler.Stop();
  if (!rss.ok()) return rss.status();
  run.rss = *std::move(rss);
  absl::StatusOr<int64_t> hwm = PeakRssKib(pid);
  if (!hwm.ok()) return hwm.status();
  run.vm_hwm_kib = *hwm;
  run.health = CheckSidecarHealth(session, kRecoveryLimit);
  return absl::OkStatus();
}

JsonObject PhaseJson(const Phase& phase, absl::Duration duration) {
  JsonObject json;
  json.AddDouble("offered_rps", phase.rate, 1)
      .AddDouble("achieved_rps", phase.reads.AchievedRps(), 1)
      .AddDouble("duration_s", absl::ToDoubleSeconds(duration), 3);
  AddOpenLoopFields(phase.reads, json);
  AddRejectionFields(phase.reads, json);
  json.AddInt("rss_kib_at_end", phase.rss_kib_at_end);
  return json;
}

// Latency percentile `per_100k` of the ok reads of `phase` over that of the
// first quiet phase; NaN (null) when either has no sample.
double RatioToQuiet(const OverloadRun& run, const Phase& phase,
                    int64_t per_100k) {
  const std::vector<absl::Duration>& quiet = run.phases.front().reads.latencies;
  const std::vector<absl::Duration>& loaded = phase.reads.latencies;
  if (quiet.empty() || loaded.empty()) return std::nan("");
  return absl::FDivDuration(NearestRank(loaded, per_100k),
                            NearestRank(quiet, per_100k));
}

JsonObject HealthJson(const SidecarHealth& health) {
  JsonObject json;
  json.AddInt("healthz_status", health.healthz_status)
      .AddBool("new_channel_read_ok", health.new_channel_failure.empty());
  if (!health.new_channel_failure.empty()) {
    json.AddString("new_channel_failure", health.new_channel_failure);
  }
  if (health.recovery.has_value()) {
    json.AddMillis("recovery_ms", *health.recovery);
  } else {
    json.AddNull("recovery_ms");
  }
  json.AddInt("probe_reads", health.probe_reads);
  if (!health.first_probe_failure.empty()) {
    json.AddString("first_probe_failure", health.first_probe_failure);
  }
  return json;
}

JsonObject RssJson(const RssSeries& series) {
  JsonObject rss;
  rss.AddMillis("interval_ms", series.interval)
      .AddUint("samples", series.kib.size())
      .AddInt("min", series.Min())
      .AddInt("max", series.Max())
      .AddInt("first", series.kib.front())
      .AddInt("last", series.kib.back());
  return rss;
}

JsonObject OverloadLine(const ExperimentConfig& config, const Policy& policy,
                        const OverloadRun& run, const SidecarStats& metrics) {
  JsonObject line;
  line.AddString("mode", policy.mode)
      .AddString("scenario", "overload")
      .AddInt("max_requests", kMaxRequests);
  for (const Phase& phase : run.phases) {
    line.AddObject(phase.name, PhaseJson(phase, config.duration));
  }
  const Phase& overload = run.phases[1];
  const Phase& quiet_after = run.phases[2];
  line.AddDouble("overload_p50_over_quiet", RatioToQuiet(run, overload, kP50),
                 2)
      .AddDouble("overload_p99_over_quiet", RatioToQuiet(run, overload, kP99),
                 2)
      .AddDouble("quiet_after_p99_over_quiet",
                 RatioToQuiet(run, quiet_after, kP99), 2)
      .AddObject("rss_kib", RssJson(run.rss))
      .AddInt("vm_hwm_kib", run.vm_hwm_kib)
      .AddObject("health", HealthJson(run.health))
      .AddDouble("attempts_per_request", AttemptsPerRequest(metrics), 3)
      .AddObject("metrics", MetricsJson(metrics))
      .AddString("sidecar_flags", absl::StrJoin(policy.flags, " "))
      .AddInt("warmup", config.warmup);
  return line;
}

absl::Status HealthError(const SidecarHealth& health) {
  if (health.Healthy()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(
      "the sidecar is not healthy after the overload: /healthz answered ",
      health.healthz_status, "; reads on the loaded connection: ",
      health.recovery.has_value()
          ? "ok again"
          : absl::StrCat("none ok within ",
                         absl::FormatDuration(kRecoveryLimit),
                         ", the first: ", health.first_probe_failure)));
}

}  // namespace

absl::Status RunOverloadScenario(const ExperimentConfig& config,
                                 const std::string& tailgate) {
  absl::StatusOr<std::unique_ptr<ReplicaPair>> replicas =
      ReplicaPair::Start(StragglerMix::kSeed);
  if (!replicas.ok()) return replicas.status();
  const Policy policy = OverloadPolicy();
  const SidecarSetup setup =
      SetupFor(config, tailgate, (*replicas)->backends());

  OverloadRun run;
  absl::StatusOr<SidecarStats> metrics =
      MeasureOnFreshSidecar(setup, policy, [&](SidecarSession& session) {
        return MeasureOverload(config, session, run);
      });
  if (!metrics.ok()) return metrics.status();
  PrintLine(OverloadLine(config, policy, run, *metrics));
  return HealthError(run.health);
}

}  // namespace tailgate::experiment
