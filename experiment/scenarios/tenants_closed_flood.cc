#include "experiment/scenarios/tenants_closed_flood.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/client.h"
#include "experiment/config/policies.h"
#include "experiment/config/workload.h"
#include "experiment/load/closed_loop.h"
#include "experiment/load/progress.h"
#include "experiment/load/read_outcome.h"
#include "experiment/measure/prometheus_text.h"
#include "experiment/replicas/replica_pair.h"
#include "experiment/report/percentiles.h"
#include "experiment/report/report.h"
#include "experiment/scenarios/sidecar_session.h"

namespace tailgate::experiment {
namespace {

constexpr int kFloodThreads = 8;
// Slow on A (ids ending 0), fast on B: every flood read wants a hedge.
constexpr uint64_t kFloodId = 10;

std::vector<std::string> ClosedFloodFlags() {
  return {"--tenant_share=0.5",    "--hedge_delay=5ms",
          "--hedge_fraction=0.25", "--hedge_burst=4",
          "--failure_threshold=1000"};
}

struct FloodCount {
  std::atomic<int64_t> ok{0};
  std::atomic<int64_t> failed{0};
};

// Reads kFloodId as tenant "b" from kFloodThreads threads until `stop`.
void Flood(Client& client, const std::atomic<bool>& stop, FloodCount& count) {
  std::vector<std::thread> threads;
  for (int i = 0; i < kFloodThreads; ++i) {
    threads.emplace_back([&] {
      ReadRequest request;
      request.path = ReadPath(kFloodId);
      request.tenant = "b";
      while (!stop.load(std::memory_order_relaxed)) {
        const bool ok = Classify(client.Read(request)) == ReadOutcome::kOk;
        (ok ? count.ok : count.failed).fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

double Delta(const std::string& before, const std::string& after,
             absl::string_view metric, absl::string_view labels = "") {
  return SumSamples(after, metric, labels) - SumSamples(before, metric, labels);
}

}  // namespace

absl::Status RunTenantsClosedFlood(const ExperimentConfig& config,
                                   const std::string& tailgate) {
  absl::StatusOr<std::unique_ptr<ReplicaPair>> replicas =
      ReplicaPair::Start(StragglerMix::kSeed);
  if (!replicas.ok()) return replicas.status();
  const SidecarSetup setup =
      SetupFor(config, tailgate, (*replicas)->backends());
  Note(absl::StrCat("tenants closed loop: \"a\" ", config.requests,
                    " sequential reads, alone and beside \"b\" reading ",
                    ReadPath(kFloodId), " from ", kFloodThreads, " threads"));
  absl::Duration p99[2];
  for (const bool flooded : {false, true}) {
    const Policy policy = {flooded ? "closed_flood" : "closed_alone",
                           ClosedFloodFlags()};
    std::vector<absl::Duration> latencies;
    int64_t hedged = 0;
    FloodCount flood;
    std::string before, after;
    absl::StatusOr<SidecarStats> stats = MeasureOnFreshSidecar(
        setup, policy, [&](SidecarSession& session) -> absl::Status {
          absl::StatusOr<MetricsText> start = session.Metrics();
          if (!start.ok()) return start.status();
          before = std::move(start->text);
          std::unique_ptr<Client> flood_client;
          std::atomic<bool> stop{false};
          std::thread flood_thread;
          if (flooded) {
            absl::StatusOr<std::unique_ptr<Client>> client =
                session.ConnectOwnClient();
            if (!client.ok()) return client.status();
            flood_client = *std::move(client);
            flood_thread = std::thread(
                [&] { Flood(*flood_client, stop, flood); });
          }
          Progress progress(absl::StrCat("tenants ", policy.mode),
                            config.requests);
          absl::StatusOr<std::vector<SequentialRead>> reads =
              RunSequentialReads(
                  session.client(), config.requests,
                  [](int64_t i) { return ReadPath(static_cast<uint64_t>(i)); },
                  progress, 0, "a");
          stop.store(true);
          if (flood_thread.joinable()) flood_thread.join();
          if (!reads.ok()) return reads.status();
          for (const SequentialRead& read : *reads) {
            latencies.push_back(read.latency);
            hedged += read.hedged ? 1 : 0;
          }
          absl::StatusOr<MetricsText> end = session.Metrics();
          if (!end.ok()) return end.status();
          after = std::move(end->text);
          return absl::OkStatus();
        });
    if (!stats.ok()) return stats.status();
    std::sort(latencies.begin(), latencies.end());
    const LatencySummary summary = Summarize(latencies);
    p99[flooded ? 1 : 0] = summary.p99;
    JsonObject skipped;
    for (const char* reason :
         {"no_budget", "no_tenant_budget", "no_capacity", "no_replica"}) {
      skipped.AddInt(reason,
                     static_cast<int64_t>(Delta(
                         before, after, "tailgate_hedges_skipped_total",
                         absl::StrCat("reason=\"", reason, "\""))));
    }
    JsonObject line;
    line.AddString("scenario", "tenants")
        .AddString("mode", policy.mode)
        .AddInt("a_reads", static_cast<int64_t>(latencies.size()))
        .AddInt("a_hedged", hedged);
    AddLatencyFields(summary, line, "a_");
    line.AddInt("b_reads_ok", flood.ok.load())
        .AddInt("b_reads_failed", flood.failed.load())
        .AddInt("b_hedges",
                static_cast<int64_t>(Delta(before, after,
                                           "tailgate_tenant_hedges_total",
                                           "tenant=\"b\"")))
        .AddObject("skipped", skipped)
        .AddInt("ejections",
                static_cast<int64_t>(
                    Delta(before, after, "tailgate_ejections_total")))
        .AddInt("give_up_fallbacks",
                static_cast<int64_t>(Delta(
                    before, after, "tailgate_give_up_fallbacks_total")))
        .AddObject("metrics", MetricsJson(*stats))
        .AddString("sidecar_flags", absl::StrJoin(policy.flags, " "));
    PrintLine(line);
  }
  JsonObject summary;
  summary.AddString("scenario", "tenants")
      .AddString("summary", "closed_flood")
      .AddDouble("a_p99_alone_ms", absl::ToDoubleMilliseconds(p99[0]), 3)
      .AddDouble("a_p99_flooded_ms", absl::ToDoubleMilliseconds(p99[1]), 3)
      .AddDouble("a_p99_flooded_over_alone",
                 absl::ToDoubleMilliseconds(p99[1]) /
                     std::max(absl::ToDoubleMilliseconds(p99[0]), 1e-3),
                 3);
  PrintLine(summary);
  return absl::OkStatus();
}

}  // namespace tailgate::experiment
