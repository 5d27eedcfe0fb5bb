// fanout: a multi-get of 100 or 1000 keys is as slow as its slowest key.
// Two embedded replicas with the kFanout mix (a read meets a slow primary
// with a fast alternate one time in a hundred); the parts in
// fanout_parts.h, each printing its lines; the plots at the end.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "experiment/config/workload.h"
#include "experiment/load/progress.h"
#include "experiment/replicas/replica_pair.h"
#include "experiment/report/plots.h"
#include "experiment/scenarios/fanout_parts.h"
#include "experiment/scenarios/scenarios.h"

namespace tailgate::experiment {

absl::Status RunFanoutScenario(const ExperimentConfig& config,
                               const std::string& tailgate) {
  absl::StatusOr<std::unique_ptr<ReplicaPair>> replicas =
      ReplicaPair::Start(StragglerMix::kFanout);
  if (!replicas.ok()) return replicas.status();
  const FanoutRun run{config, tailgate, **replicas};
  const FanoutConfig& fanout = config.fanout;
  struct Plot {
    std::string name, title;
    std::vector<CdfSeries> curves;
  };
  std::vector<Plot> plots;
  if (fanout.Runs(FanoutPart::kBatches)) {
    for (int keys : fanout.sizes) {
      absl::StatusOr<std::vector<CdfSeries>> curves =
          RunFanoutBatches(run, keys);
      if (!curves.ok()) return curves.status();
      plots.push_back(
          {absl::StrCat("fanout_", keys),
           absl::StrCat("fanout: batch latency, ", keys, " keys per batch, ",
                        fanout.batches, " batches per arm"),
           *std::move(curves)});
    }
  }
  if (fanout.Runs(FanoutPart::kPerKeyCost)) {
    absl::StatusOr<std::vector<CdfSeries>> curves = RunFanoutPerKeyCost(run);
    if (!curves.ok()) return curves.status();
    plots.push_back({"fanout_per_key_cost",
                     "fanout: 100 fast keys, one ReadMany vs 100 Read calls",
                     *std::move(curves)});
  }
  if (fanout.Runs(FanoutPart::kHotKeys)) {
    absl::StatusOr<std::vector<CdfSeries>> curves = RunFanoutHotKeys(run);
    if (!curves.ok()) return curves.status();
    plots.push_back({"fanout_hot_keys",
                     "fanout: Zipf-distributed keys, latency of every read",
                     *std::move(curves)});
  }
  if (config.plot_dir.empty()) return absl::OkStatus();
  for (const Plot& plot : plots) {
    absl::Status drawn =
        PlotLatencyCdf(config.plot_dir, plot.name, plot.title, plot.curves);
    if (!drawn.ok()) return drawn;
  }
  return absl::OkStatus();
}

}  // namespace tailgate::experiment
