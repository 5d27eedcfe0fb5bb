// Closed-loop saturation with fast replicas: the same number of
// outstanding reads straight to the replicas (libcurl) and through the
// sidecar, one after the other in one run, so that their ratio is taken
// under the same machine conditions.

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "experiment/config/policies.h"
#include "experiment/config/workload.h"
#include "experiment/load/direct_curl_reads.h"
#include "experiment/load/progress.h"
#include "experiment/load/saturating_reads.h"
#include "experiment/measure/peak_rss.h"
#include "experiment/replicas/replica_pair.h"
#include "experiment/report/report.h"
#include "experiment/scenarios/scenarios.h"
#include "experiment/scenarios/sidecar_session.h"

namespace tailgate::experiment {
namespace {

// The sidecar's admission limits must not be what throttles the run.
std::vector<std::string> AdmissionFlags(int concurrency) {
  return {absl::StrCat("--max_requests=", std::max(128, 2 * concurrency)),
          absl::StrCat("--max_attempts=", std::max(160, 2 * concurrency))};
}

}  // namespace

absl::Status RunThroughputScenario(const ExperimentConfig& config,
                                   const std::string& tailgate) {
  absl::StatusOr<std::unique_ptr<ReplicaPair>> replicas =
      ReplicaPair::Start(StragglerMix::kNone);
  if (!replicas.ok()) return replicas.status();
  const std::string duration = absl::FormatDuration(config.duration);

  Note(absl::StrCat("throughput direct: ", config.concurrency,
                    " libcurl handles for ", duration));
  absl::StatusOr<LoadCount> direct = RunDirectCurlReads(
      {(*replicas)->url(ReplicaName::kA), (*replicas)->url(ReplicaName::kB)},
      ReadPath(0), config.concurrency, config.duration);
  if (!direct.ok()) return direct.status();

  // No hedging: this measures what the sidecar's path costs, not hedges.
  const Policy& policy = ComparedPolicies().front();
  Note(absl::StrCat("throughput sidecar (", policy.mode, "): ",
                    config.concurrency, " outstanding reads for ", duration));
  const SidecarSetup setup = SetupFor(config, tailgate, (*replicas)->backends(),
                                      AdmissionFlags(config.concurrency));
  LoadCount sidecar;
  int64_t peak_rss_kib = 0;
  absl::StatusOr<SidecarStats> metrics = MeasureOnFreshSidecar(
      setup, policy, [&](SidecarSession& session) -> absl::Status {
        absl::StatusOr<LoadCount> run = RunSaturatingReads(
            session.client(), config.concurrency, config.duration);
        if (!run.ok()) return run.status();
        sidecar = *run;
        absl::StatusOr<int64_t> rss = PeakRssKib(session.process().pid());
        if (!rss.ok()) return rss.status();
        peak_rss_kib = *rss;
        return absl::OkStatus();
      });
  if (!metrics.ok()) return metrics.status();

  JsonObject line;
  line.AddString("mode", policy.mode)
      .AddString("scenario", "throughput")
      .AddInt("concurrency", config.concurrency)
      .AddDouble("duration_s", absl::ToDoubleSeconds(config.duration), 3)
      .AddDouble("sidecar_rps", sidecar.OkPerSecond(), 1)
      .AddDouble("direct_rps", direct->OkPerSecond(), 1)
      .AddDouble("ratio", sidecar.OkPerSecond() / direct->OkPerSecond(), 3)
      .AddInt("sidecar_ok", sidecar.ok)
      .AddInt("sidecar_rejected", sidecar.rejected)
      .AddInt("sidecar_failed", sidecar.failed)
      .AddInt("direct_ok", direct->ok)
      .AddInt("direct_failed", direct->failed)
      .AddInt("sidecar_peak_rss_kib", peak_rss_kib)
      .AddDouble("attempts_per_request", AttemptsPerRequest(*metrics), 3)
      .AddObject("metrics", MetricsJson(*metrics))
      .AddInt("warmup", config.warmup);
  PrintLine(line);
  return absl::OkStatus();
}

}  // namespace tailgate::experiment
