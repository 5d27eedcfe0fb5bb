// sick: what one sick replica among healthy ones costs a steady reader.
// Per case (sick kind x replicas x rate): N embedded replicas, the last
// one sick (sick_replicas.h); a fresh target with its default flags
// reading through to them (sick_targets.h): tailgate, and the Go gateway
// with --peer_gateway, back to back, the order alternating from case to
// case, each with fresh replicas; one steady open-loop reader
// (steady_reads.h) for --sick_seconds with a 3 s deadline per read, and
// the target's counters sampled every second (sick_timeline.h). One JSON
// line per case and target; with --plot_dir a timeline per case.
//
// Failed reads are what is measured, not errors of the run; a wrong body
// is a correctness bug and fails the run, after every line is printed.

#include <stdlib.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "experiment/config/workload.h"
#include "experiment/load/progress.h"
#include "experiment/load/steady_reads.h"
#include "experiment/replicas/sick_replicas.h"
#include "experiment/report/json_line.h"
#include "experiment/report/periodic_sampler.h"
#include "experiment/report/plots.h"
#include "experiment/report/report.h"
#include "experiment/report/sick_timeline.h"
#include "experiment/scenarios/scenarios.h"
#include "experiment/scenarios/sick_targets.h"

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kReadDeadline = absl::Seconds(3);
constexpr absl::Duration kSampleInterval = absl::Seconds(1);

struct SickCase {
  SickKind kind = SickKind::kHang;
  int replicas = 2;
  double rate = 2;

  // "gray 3 replicas 20 reads/s"
  std::string Describe() const {
    return absl::StrCat(SickKindName(kind), " ", replicas, " replicas ", rate,
                        " reads/s");
  }
  // "sick_gray_3r_20rps": the plot's file name.
  std::string PlotName() const {
    return absl::StrCat("sick_", SickKindName(kind), "_", replicas, "r_", rate,
                        "rps");
  }
};

std::vector<SickCase> CasesOf(const SickConfig& config) {
  std::vector<SickCase> cases;
  for (SickKind kind : config.kinds) {
    for (int replicas : config.replicas) {
      for (double rate : config.rates) cases.push_back({kind, replicas, rate});
    }
  }
  return cases;
}

SickCaseShape ShapeOf(const SickConfig& config, const SickCase& sick_case) {
  SickCaseShape shape;
  shape.seconds = static_cast<int>(absl::ToInt64Seconds(config.seconds));
  shape.replicas = sick_case.replicas;
  shape.deadline = kReadDeadline;
  if (sick_case.kind == SickKind::kHeal) shape.heal_at = kHealAfter;
  return shape;
}

// One target through one case, on fresh replicas and a fresh process.
absl::StatusOr<SickCaseFigures> MeasureTarget(const SickConfig& config,
                                              const SickTargetSetup& setup,
                                              const SickCase& sick_case,
                                              SickTarget target) {
  absl::StatusOr<std::unique_ptr<SickReplicaSet>> replicas =
      SickReplicaSet::Start(sick_case.kind, sick_case.replicas);
  if (!replicas.ok()) return replicas.status();
  absl::StatusOr<std::unique_ptr<SickTargetProcess>> process =
      StartSickTarget(target, setup, **replicas);
  if (!process.ok()) return process.status();

  SteadyReadOptions options;
  options.rate = sick_case.rate;
  options.duration = config.seconds;
  options.deadline = kReadDeadline;
  Progress progress(
      absl::StrCat(SickTargetName(target), " ", sick_case.Describe()),
      static_cast<int64_t>(
          std::floor(options.rate * absl::ToDoubleSeconds(options.duration))));
  SickTargetProcess& running = **process;
  // Started back to back: the sampler's, the heal's and the reader's
  // clocks agree to within a scrape.
  PeriodicSampler<TargetCounters> sampler(
      [&running] { return running.ReadCounters(); }, kSampleInterval);
  (*replicas)->StartCase();
  const std::vector<ReadRecord> reads =
      RunSteadyReads(running.reads(), options, progress);
  absl::StatusOr<std::vector<CounterSample>> samples = sampler.Stop();
  if (!samples.ok()) return samples.status();
  absl::Status stopped = running.Stop();
  if (!stopped.ok()) return stopped;
  return SummarizeSickCase(reads, *samples, ShapeOf(config, sick_case));
}

JsonObject SickLine(const SickConfig& config, const SickCase& sick_case,
                    SickTarget target, const SickCaseFigures& figures) {
  JsonObject line;
  line.AddString("scenario", "sick")
      .AddString("target", SickTargetName(target))
      .AddString("kind", SickKindName(sick_case.kind))
      .AddInt("replicas", sick_case.replicas)
      .AddDouble("rate", sick_case.rate, 1)
      .AddInt("seconds", absl::ToInt64Seconds(config.seconds))
      .AddMillis("deadline_ms", kReadDeadline);
  AddSickCaseFields(figures, line);
  return line;
}

SickSeries SeriesOf(SickTarget target, const SickCaseFigures& figures) {
  SickSeries series;
  series.target = SickTargetName(target);
  for (const SecondFigures& second : figures.per_second) {
    SickSeries::Second point;
    point.reads = second.reads;
    point.failed = second.failed;
    point.p99_ms = second.p99.has_value()
                       ? absl::ToDoubleMilliseconds(*second.p99)
                       : std::numeric_limits<double>::quiet_NaN();
    point.sick_share = second.primary_shares.empty()
                           ? std::numeric_limits<double>::quiet_NaN()
                           : second.primary_shares.back();
    series.seconds.push_back(point);
  }
  return series;
}

absl::StatusOr<std::string> MakeWorkDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string pattern =
      absl::StrCat(base != nullptr ? base : "/tmp", "/tailgate-sick-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError("cannot make a work directory");
  }
  return pattern;
}

}  // namespace

absl::Status RunSickScenario(const ExperimentConfig& config,
                             const std::string& tailgate) {
  absl::StatusOr<std::string> work_dir = MakeWorkDir();
  if (!work_dir.ok()) return work_dir.status();
  absl::Cleanup remove_work_dir = [&work_dir] {
    std::error_code ignored;
    std::filesystem::remove_all(*work_dir, ignored);
  };
  const SickTargetSetup setup{tailgate, config.peer_gateway, *work_dir};
  std::vector<SickTarget> targets = {SickTarget::kTailgate};
  if (!config.peer_gateway.empty()) targets.push_back(SickTarget::kGateway);

  const std::vector<SickCase> cases = CasesOf(config.sick);
  Note(absl::StrCat("sick: ", cases.size(), " cases x ", targets.size(),
                    " targets, ", absl::FormatDuration(config.sick.seconds),
                    " of reads each"));
  int64_t wrong_bodies = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const SickCase& sick_case = cases[i];
    // Plotted in `targets` order, so that each target keeps its colour in
    // every plot.
    std::vector<SickSeries> plotted(targets.size());
    for (size_t k = 0; k < targets.size(); ++k) {
      // A/B, then B/A: neither target always runs first.
      const size_t index = i % 2 == 0 ? k : targets.size() - 1 - k;
      const SickTarget target = targets[index];
      absl::StatusOr<SickCaseFigures> figures =
          MeasureTarget(config.sick, setup, sick_case, target);
      if (!figures.ok()) {
        return absl::Status(
            figures.status().code(),
            absl::StrCat(SickTargetName(target), ", ", sick_case.Describe(),
                         ": ", figures.status().message()));
      }
      PrintLine(SickLine(config.sick, sick_case, target, *figures));
      const auto wrong = figures->errors.find(kWrongBody);
      if (wrong != figures->errors.end()) wrong_bodies += wrong->second;
      plotted[index] = SeriesOf(target, *figures);
    }
    if (!config.plot_dir.empty()) {
      absl::Status drawn = PlotSickTimeline(
          config.plot_dir, sick_case.PlotName(),
          absl::StrCat("sick: ", sick_case.Describe(), ", last replica sick"),
          plotted,
          sick_case.kind == SickKind::kHeal
              ? std::optional<double>(absl::ToDoubleSeconds(kHealAfter))
              : std::nullopt);
      if (!drawn.ok()) return drawn;
    }
  }
  if (wrong_bodies > 0) {
    return absl::InternalError(
        absl::StrCat(wrong_bodies, " reads got a 200 with a body other than \"",
                     kReplicaBody, "\": a correctness bug, not a measurement"));
  }
  return absl::OkStatus();
}

}  // namespace tailgate::experiment
