// The fanout scenario's hot-key part: kHotReaders concurrent readers, each
// sending a quarter of --fanout_batches ReadMany batches of 100 keys drawn
// from kHotKeys keys with Zipf's law (s = kZipfS; GET /hot?k=N, 2 ms on
// both replicas), through a fresh hedging sidecar (5 ms) without and with
// --coalesce. Upstream fetches are the requests the replicas themselves
// received; attempts are the sidecar's. With --fanout_coalesce=auto the
// coalescing case runs only when the tailgate binary takes --coalesce
// (asked with `tailgate --coalesce --version`), and is a "skipped" line
// otherwise.

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "experiment/config/fanout_keys.h"
#include "experiment/config/policies.h"
#include "experiment/config/workload.h"
#include "experiment/load/grpc_batches.h"
#include "experiment/load/progress.h"
#include "experiment/report/report.h"
#include "experiment/scenarios/fanout_parts.h"
#include "experiment/scenarios/sidecar_session.h"
#include "tests/process/child_process.h"

namespace tailgate::experiment {
namespace {

constexpr int kHotReaders = 4;
// Each reader's batch runs this many reads at once: the readers together
// as many as one batch of the batches part.
constexpr int kHotInFlight = kFanoutInFlight / kHotReaders;
constexpr int kHotBatchKeys = 100;
constexpr int kHotKeys = 1000;
constexpr double kZipfS = 1.1;
constexpr char kCoalesceFlag[] = "--coalesce";
constexpr absl::Duration kProbeTimeout = absl::Seconds(10);

// Whether `tailgate` takes --coalesce: abseil refuses an unknown flag
// (exit 1) before it handles --version (exit 0).
bool TakesCoalesceFlag(const std::string& tailgate) {
  testing::ChildOptions options;
  options.argv = {tailgate, kCoalesceFlag, "--version"};
  options.stdout_to = testing::Output::Null();
  options.stderr_to = testing::Output::Null();
  absl::StatusOr<std::unique_ptr<testing::ChildProcess>> probe =
      testing::ChildProcess::Start(std::move(options));
  if (!probe.ok()) return false;
  return (*probe)->Wait(kProbeTimeout) == 0;
}

std::vector<std::string> HotBatch(ZipfKeys& zipf) {
  std::vector<std::string> paths;
  for (int k = 0; k < kHotBatchKeys; ++k) paths.push_back(HotPath(zipf.Next()));
  return paths;
}

absl::StatusOr<BatchSeries> HotCase(const FanoutRun& run, bool coalesce) {
  std::vector<std::string> extra;
  if (coalesce) extra.push_back(kCoalesceFlag);
  const SidecarSetup setup =
      SetupFor(run.config, run.tailgate, run.replicas.backends(), extra);
  const Policy& policy = StragglerPolicies()[1];  // hedged, 5 ms
  const int64_t per_reader =
      std::max<int64_t>(1, run.config.fanout.batches / kHotReaders);
  BatchSeries all;
  int64_t fetches = 0;
  std::optional<SidecarStats> stats;
  absl::StatusOr<SidecarStats> unused = MeasureOnFreshSidecar(
      setup, policy, [&](SidecarSession& session) -> absl::Status {
        absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
            ConnectChannel(session.read_address());
        if (!channel.ok()) return channel.status();
        ReadManyBatches target(*channel,
                               {kHotInFlight, false, kFanoutBatchDeadline});
        absl::Status warm = WarmUpTarget(target, kHotBatchKeys);
        if (!warm.ok()) return warm;
        absl::StatusOr<SidecarStats> before = session.Stats();
        if (!before.ok()) return before.status();
        const int64_t received_before = run.replicas.hot_reads_received();
        std::vector<absl::StatusOr<BatchSeries>> results(
            kHotReaders, absl::UnknownError("not run"));
        std::vector<std::thread> readers;
        for (int r = 0; r < kHotReaders; ++r) {
          readers.emplace_back([&, r] {
            ZipfKeys zipf(kHotKeys, kZipfS, /*seed=*/1000 + r);
            results[r] = RunBatchSeries(
                target,
                absl::StrCat("fanout hot keys coalesce=", coalesce, " reader ",
                             r),
                per_reader, [&zipf](int64_t) { return HotBatch(zipf); });
          });
        }
        for (std::thread& reader : readers) reader.join();
        fetches = run.replicas.hot_reads_received() - received_before;
        for (absl::StatusOr<BatchSeries>& result : results) {
          if (!result.ok()) return result.status();
          all.batch_latencies.insert(all.batch_latencies.end(),
                                     result->batch_latencies.begin(),
                                     result->batch_latencies.end());
          all.key_latencies.insert(all.key_latencies.end(),
                                   result->key_latencies.begin(),
                                   result->key_latencies.end());
          all.keys += result->keys;
          all.item_attempts += result->item_attempts;
        }
        absl::StatusOr<SidecarStats> after = session.Stats();
        if (!after.ok()) return after.status();
        stats = StatsDelta(*before, *after);
        return absl::OkStatus();
      });
  if (!unused.ok()) return unused.status();
  all.Sort();
  const double reads = static_cast<double>(all.keys);
  JsonObject line;
  line.AddString("scenario", "fanout")
      .AddString("part", "hot_keys")
      .AddBool("coalesce", coalesce)
      .AddInt("readers", kHotReaders)
      .AddInt("keys_per_batch", kHotBatchKeys)
      .AddInt("distinct_keys", kHotKeys)
      .AddDouble("zipf_s", kZipfS, 2)
      .AddInt("reads", all.keys)
      .AddInt("fetches", fetches)
      .AddInt("attempts", static_cast<int64_t>(stats->attempts))
      .AddDouble("fetches_per_read", static_cast<double>(fetches) / reads, 4)
      .AddDouble("attempts_per_read",
                 static_cast<double>(stats->attempts) / reads, 4);
  AddLatencyFields(Summarize(all.key_latencies), line, "read_");
  AddLatencyFields(Summarize(all.batch_latencies), line, "batch_");
  line.AddObject("metrics", MetricsJson(*stats))
      .AddString("sidecar_flags",
                 absl::StrJoin(policy.flags, " ") +
                     (coalesce ? absl::StrCat(" ", kCoalesceFlag) : ""));
  PrintLine(line);
  return all;
}

}  // namespace

absl::StatusOr<std::vector<CdfSeries>> RunFanoutHotKeys(const FanoutRun& run) {
  std::vector<CdfSeries> curves;
  absl::StatusOr<BatchSeries> off = HotCase(run, false);
  if (!off.ok()) return off.status();
  curves.push_back({"coalesce_off", std::move(off->key_latencies)});

  std::string skipped;
  switch (run.config.fanout.coalesce) {
    case FanoutCoalesce::kOff:
      skipped = "--fanout_coalesce=false";
      break;
    case FanoutCoalesce::kAuto:
      if (!TakesCoalesceFlag(run.tailgate)) {
        skipped = "the tailgate binary does not take --coalesce";
      }
      break;
    case FanoutCoalesce::kOn:
      break;
  }
  if (!skipped.empty()) {
    Note(absl::StrCat("fanout hot keys: coalescing skipped: ", skipped));
    JsonObject line;
    line.AddString("scenario", "fanout")
        .AddString("part", "hot_keys")
        .AddBool("coalesce", true)
        .AddString("skipped", skipped);
    PrintLine(line);
    return curves;
  }
  absl::StatusOr<BatchSeries> on = HotCase(run, true);
  if (!on.ok()) return on.status();
  curves.push_back({"coalesce_on", std::move(on->key_latencies)});
  return curves;
}

}  // namespace tailgate::experiment
