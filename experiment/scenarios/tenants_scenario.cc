// Tenants: a well-behaved tenant "a" sends the straggler mix open loop
// (GET /read?id=N, kSeedAnyPhase: a fifth of its primaries are slow and a
// hedge wins them) while tenant "b" floods the same sidecar with reads that
// are slow on both replicas (GET /slow?n=N, 40 ms everywhere: every one
// wants a hedge and none can win). Three fresh sidecars, one after the
// other, in one run:
//   alone           "a" only, with --tenant_share=0.5;
//   flood           "a" and the flood of "b" together, --tenant_share=0.5;
//   flood_no_share  the same with --tenant_share=1 (no per-tenant limit).
// The first two are the comparison that matters: "a"'s p99 and hedge count
// with the flood against its own figures without it. The third shows what
// the share prevents. "a"'s hedges and refusals are read from the
// tailgate_tenant_* metrics.

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/client.h"
#include "experiment/config/policies.h"
#include "experiment/config/workload.h"
#include "experiment/load/open_loop.h"
#include "experiment/load/progress.h"
#include "experiment/measure/open_loop_report.h"
#include "experiment/measure/prometheus_text.h"
#include "experiment/replicas/replica_pair.h"
#include "experiment/report/plots.h"
#include "experiment/report/report.h"
#include "experiment/scenarios/scenarios.h"
#include "experiment/scenarios/sidecar_session.h"
#include "experiment/scenarios/tenants_closed_flood.h"

namespace tailgate::experiment {
namespace {

constexpr char kWellBehaved[] = "a";
constexpr char kFlooding[] = "b";
// The flood's rate, as a multiple of --rate. At 4 x 200 req/s of 40 ms
// reads, "b" alone would hold 32 reads in flight: every request slot.
constexpr double kFloodFactor = 4;
constexpr int kMaxRequests = 32;

// Hedged at 5 ms like the straggler study, with hedge credits to spare for
// "a" (half a credit per read against the fifth of its reads that want a
// hedge, 10 banked, 5 of them its own at a share of 0.5): its figures alone
// are not bound by the budget, so what the flood changes is the flood's
// doing. A small admission limit, so that the flood can fill it; and room
// for every call on each tenant's gRPC connection (each tenant is an app of
// its own, with a connection of its own), so that what refuses a read is
// the engine's admission, not a connection's stream limit (2 *
// max_requests by default).
std::vector<std::string> TenantFlags(const char* share) {
  return {"--hedge_delay=5ms", "--hedge_fraction=0.5", "--hedge_burst=10",
          absl::StrCat("--max_requests=", kMaxRequests),
          "--max_streams_per_connection=4096",
          absl::StrCat("--tenant_share=", share)};
}

struct Mode {
  Policy policy;
  bool flood;
};

const std::vector<Mode>& Modes() {
  static const auto* const modes = new std::vector<Mode>{
      {{"alone", TenantFlags("0.5")}, false},
      {{"flood", TenantFlags("0.5")}, true},
      {{"flood_no_share", TenantFlags("1")}, true},
  };
  return *modes;
}

struct TenantRun {
  OpenLoopResult a;
  OpenLoopResult b;    // empty without the flood
  std::string before;  // Prometheus text
  std::string after;
};

int64_t TenantDelta(const TenantRun& run, absl::string_view metric,
                    const char* tenant) {
  const std::string label = absl::StrCat("tenant=\"", tenant, "\"");
  return static_cast<int64_t>(SumSamples(run.after, metric, label) -
                              SumSamples(run.before, metric, label));
}

JsonObject TenantJson(const TenantRun& run, const char* tenant,
                      const OpenLoopResult& reads) {
  JsonObject json;
  json.AddString("tenant", tenant);
  AddOpenLoopFields(reads, json);
  json.AddInt("tenant_requests",
              TenantDelta(run, "tailgate_tenant_requests_total", tenant))
      .AddInt("tenant_rejected",
              TenantDelta(run, "tailgate_tenant_rejected_total", tenant))
      .AddInt("tenant_hedges",
              TenantDelta(run, "tailgate_tenant_hedges_total", tenant))
      .AddInt("tenant_hedge_wins",
              TenantDelta(run, "tailgate_tenant_hedge_wins_total", tenant));
  return json;
}

// Extra attempts wanted and not launched during the run, by reason (both
// tenants together: the metric has no tenant label).
JsonObject SkippedJson(const TenantRun& run) {
  JsonObject skipped;
  for (const char* reason :
       {"no_budget", "no_tenant_budget", "no_capacity", "no_replica"}) {
    const std::string label = absl::StrCat("reason=\"", reason, "\"");
    skipped.AddInt(
        reason,
        static_cast<int64_t>(
            SumSamples(run.after, "tailgate_hedges_skipped_total", label) -
            SumSamples(run.before, "tailgate_hedges_skipped_total", label)));
  }
  return skipped;
}

absl::Status MeasureTenants(const ExperimentConfig& config, const Mode& mode,
                            SidecarSession& session, TenantRun& run) {
  absl::StatusOr<MetricsText> before = session.Metrics();
  if (!before.ok()) return before.status();
  run.before = std::move(before->text);

  OpenLoopOptions a;
  a.rate = config.rates[0];
  a.duration = config.duration;
  a.tenant = kWellBehaved;
  OpenLoopOptions b = a;
  b.rate = a.rate * kFloodFactor;
  b.path = SlowPath;
  b.tenant = kFlooding;
  const auto scheduled = [](const OpenLoopOptions& options) {
    return static_cast<int64_t>(options.rate *
                                absl::ToDoubleSeconds(options.duration));
  };
  // One Progress per sending thread.
  Progress progress_a(absl::StrCat("tenants ", mode.policy.mode, " a"),
                      scheduled(a));
  // The flood comes from another app: a client on a connection of its own.
  std::unique_ptr<Client> flood_client;
  if (mode.flood) {
    absl::StatusOr<std::unique_ptr<Client>> client = session.ConnectOwnClient();
    if (!client.ok()) return client.status();
    flood_client = *std::move(client);
  }
  std::thread flood;
  if (mode.flood) {
    flood = std::thread([&] {
      Progress progress_b(absl::StrCat("tenants ", mode.policy.mode, " b"),
                          scheduled(b));
      run.b = RunOpenLoop(*flood_client, b, progress_b);
    });
  }
  run.a = RunOpenLoop(session.client(), a, progress_a);
  if (flood.joinable()) flood.join();

  absl::StatusOr<MetricsText> after = session.Metrics();
  if (!after.ok()) return after.status();
  run.after = std::move(after->text);
  return absl::OkStatus();
}

}  // namespace

absl::Status RunTenantsScenario(const ExperimentConfig& config,
                                const std::string& tailgate) {
  absl::StatusOr<std::unique_ptr<ReplicaPair>> replicas =
      ReplicaPair::Start(StragglerMix::kSeedAnyPhase);
  if (!replicas.ok()) return replicas.status();
  const SidecarSetup setup =
      SetupFor(config, tailgate, (*replicas)->backends());
  Note(absl::StrCat("tenants: \"", kWellBehaved, "\" at ", config.rates[0],
                    " req/s, \"", kFlooding, "\" flooding at ",
                    config.rates[0] * kFloodFactor, " req/s of slow reads, ",
                    absl::FormatDuration(config.duration), " per mode"));

  std::vector<CdfSeries> curves;
  for (const Mode& mode : Modes()) {
    TenantRun run;
    absl::StatusOr<SidecarStats> metrics =
        MeasureOnFreshSidecar(setup, mode.policy, [&](SidecarSession& session) {
          return MeasureTenants(config, mode, session, run);
        });
    if (!metrics.ok()) return metrics.status();
    if (absl::Status s = WrongAnswerError(run.a); !s.ok()) return s;
    if (absl::Status s = WrongAnswerError(run.b); !s.ok()) return s;
    JsonObject line;
    line.AddString("mode", mode.policy.mode)
        .AddString("scenario", "tenants")
        .AddDouble("offered_rps", config.rates[0], 1)
        .AddDouble("flood_rps", mode.flood ? config.rates[0] * kFloodFactor : 0,
                   1)
        .AddDouble("duration_s", absl::ToDoubleSeconds(config.duration), 3)
        .AddObject(kWellBehaved, TenantJson(run, kWellBehaved, run.a));
    if (mode.flood) {
      line.AddObject(kFlooding, TenantJson(run, kFlooding, run.b));
    }
    line.AddObject("skipped", SkippedJson(run))
        .AddDouble("attempts_per_request", AttemptsPerRequest(*metrics), 3)
        .AddObject("metrics", MetricsJson(*metrics))
        .AddString("sidecar_flags", absl::StrJoin(mode.policy.flags, " "))
        .AddInt("warmup", config.warmup);
    PrintLine(line);
    curves.push_back({mode.policy.mode, run.a.latencies});
  }
  if (absl::Status s = RunTenantsClosedFlood(config, tailgate); !s.ok()) {
    return s;
  }

  if (config.plot_dir.empty()) return absl::OkStatus();
  return PlotLatencyCdf(
      config.plot_dir, "tenants",
      absl::StrCat("tenants: latency CDF of tenant \"", kWellBehaved, "\", ",
                   config.rates[0], " req/s for ",
                   absl::FormatDuration(config.duration), "; flood: \"",
                   kFlooding, "\" at ", config.rates[0] * kFloodFactor,
                   " req/s of 40 ms reads"),
      curves);
}

}  // namespace tailgate::experiment
