#include "experiment/scenarios/cost_creep.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "experiment/load/progress.h"
#include "experiment/measure/process_usage.h"
#include "experiment/report/json_line.h"
#include "experiment/report/report.h"

namespace tailgate::experiment {

absl::Status MeasureCreep(const Setup& setup, ArmKind kind, const Point& point,
                          int runs, absl::Duration duration) {
  absl::StatusOr<RunningArm> arm = StartArm(setup, kind);
  if (!arm.ok()) return arm.status();
  std::vector<double> end_mib, quiet_mib;
  for (int run = 1; run <= runs; ++run) {
    Note(absl::StrCat("cost creep ", ArmName(kind), " run ", run));
    absl::StatusOr<H2loadReport> report =
        RunH2load(setup, *arm, point, duration);
    if (!report.ok()) return report.status();
    absl::StatusOr<ProcessUsage> after = ReadProcessUsage(arm->pid);
    if (!after.ok()) return after.status();
    absl::SleepFor(kCostQuietWindow);
    absl::StatusOr<ProcessUsage> quiet = ReadProcessUsage(arm->pid);
    if (!quiet.ok()) return quiet.status();
    end_mib.push_back(after->rss_kib / 1024.0);
    quiet_mib.push_back(quiet->rss_kib / 1024.0);
    JsonObject line;
    line.AddString("scenario", "cost")
        .AddString("arm", ArmName(kind))
        .AddString("point", "creep")
        .AddInt("run", run)
        .AddDouble("reads_per_s", report->reads_per_second, 1)
        .AddInt("failed", report->failed)
        .AddInt("threads", after->threads)
        .AddInt("rss_kib", after->rss_kib)
        .AddInt("rss_anon_kib", after->rss_anon_kib)
        .AddInt("rss_file_kib", after->rss_file_kib)
        .AddInt("quiet_rss_kib", quiet->rss_kib)
        .AddInt("quiet_rss_anon_kib", quiet->rss_anon_kib);
    PrintLine(line);
  }
  auto [end_min, end_max] = std::minmax_element(end_mib.begin(), end_mib.end());
  auto [quiet_min, quiet_max] =
      std::minmax_element(quiet_mib.begin(), quiet_mib.end());
  JsonObject line;
  line.AddString("scenario", "cost")
      .AddString("summary", "creep")
      .AddString("arm", ArmName(kind))
      .AddInt("runs", runs)
      .AddDouble("rss_end_min_mib", *end_min, 1)
      .AddDouble("rss_end_max_mib", *end_max, 1)
      .AddDouble("rss_end_last_minus_first_mib", end_mib.back() - end_mib[0], 1)
      .AddDouble("rss_quiet_min_mib", *quiet_min, 1)
      .AddDouble("rss_quiet_max_mib", *quiet_max, 1)
      .AddDouble("rss_quiet_last_minus_first_mib",
                 quiet_mib.back() - quiet_mib[0], 1);
  PrintLine(line);
  return StopArm(*arm);
}

}  // namespace tailgate::experiment
