// The fanout scenario's per-key cost part: one fresh sidecar (no hedging:
// the baseline policy, so every key is one attempt) and one gRPC channel;
// in each of --rounds rounds, a tenth of --fanout_batches batches of 100
// fast keys (GET /warmup?n=N) as one ReadMany each, and as many as 100
// concurrent Read calls each, the order alternating from round to round.
// Around each arm's batches, the sidecar's CPU per thread name and context
// switches (thread_cpu.h: procfs, no perf) and this process's CPU (the
// client and the embedded replicas, whose share is the same in both
// arms). One line per arm over every round, then a summary line.

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "experiment/config/policies.h"
#include "experiment/config/workload.h"
#include "experiment/load/grpc_batches.h"
#include "experiment/load/progress.h"
#include "experiment/measure/thread_cpu.h"
#include "experiment/report/report.h"
#include "experiment/scenarios/fanout_parts.h"
#include "experiment/scenarios/sidecar_session.h"

namespace tailgate::experiment {
namespace {

constexpr int kCostKeys = 100;

struct ArmTotals {
  std::string name;
  BatchSeries series;
  ThreadCpu sidecar;  // summed over the rounds
  absl::Duration own_cpu;
  std::vector<double> cpu_us_per_key_by_round;
};

void Accumulate(ThreadCpu& into, const ThreadCpu& delta) {
  for (const auto& [name, d] : delta) {
    ThreadGroupCpu& group = into[name];
    group.user += d.user;
    group.system += d.system;
    group.voluntary_switches += d.voluntary_switches;
    group.involuntary_switches += d.involuntary_switches;
  }
}

// NaN (printed null) when `of` is zero: too little CPU to count.
double Ratio(absl::Duration part, absl::Duration of) {
  return of > absl::ZeroDuration() ? absl::FDivDuration(part, of)
                                   : std::nan("");
}

double PerKey(absl::Duration cpu, int64_t keys) {
  return absl::ToDoubleMicroseconds(cpu) / static_cast<double>(keys);
}

double PerKey(int64_t count, int64_t keys) {
  return static_cast<double>(count) / static_cast<double>(keys);
}

absl::Status MeasureRound(SidecarSession& session, BatchTarget& target,
                          int64_t batches, int64_t& next_key, int round,
                          ArmTotals& arm) {
  absl::StatusOr<ThreadCpu> before = ReadThreadCpu(session.process().pid());
  if (!before.ok()) return before.status();
  absl::StatusOr<ThreadCpu> own_before = ReadThreadCpu(getpid());
  if (!own_before.ok()) return own_before.status();
  absl::StatusOr<BatchSeries> series = RunBatchSeries(
      target, absl::StrCat("fanout per-key cost ", arm.name, " round ", round),
      batches, [&next_key](int64_t) {
        std::vector<std::string> paths;
        for (int k = 0; k < kCostKeys; ++k)
          paths.push_back(WarmupPath(next_key++));
        return paths;
      });
  if (!series.ok()) return series.status();
  absl::StatusOr<ThreadCpu> after = ReadThreadCpu(session.process().pid());
  if (!after.ok()) return after.status();
  absl::StatusOr<ThreadCpu> own_after = ReadThreadCpu(getpid());
  if (!own_after.ok()) return own_after.status();
  const ThreadCpu delta = ThreadCpuDelta(*before, *after);
  Accumulate(arm.sidecar, delta);
  const ThreadGroupCpu own = TotalCpu(ThreadCpuDelta(*own_before, *own_after));
  arm.own_cpu += own.user + own.system;
  const ThreadGroupCpu total = TotalCpu(delta);
  arm.cpu_us_per_key_by_round.push_back(
      PerKey(total.user + total.system, series->keys));
  BatchSeries& all = arm.series;
  all.batch_latencies.insert(all.batch_latencies.end(),
                             series->batch_latencies.begin(),
                             series->batch_latencies.end());
  all.keys += series->keys;
  all.item_attempts += series->item_attempts;
  return absl::OkStatus();
}

void PrintArm(const FanoutRun& run, ArmTotals& arm, int64_t batches) {
  arm.series.Sort();
  const int64_t keys = arm.series.keys;
  const ThreadGroupCpu total = TotalCpu(arm.sidecar);
  JsonObject threads;
  for (const auto& [name, group] : arm.sidecar) {
    if (group.user + group.system == absl::ZeroDuration() &&
        group.voluntary_switches == 0) {
      continue;
    }
    JsonObject thread;
    thread
        .AddDouble("cpu_us_per_key", PerKey(group.user + group.system, keys), 2)
        .AddDouble("voluntary_switches_per_key",
                   PerKey(group.voluntary_switches, keys), 3);
    threads.AddObject(name, thread);
  }
  JsonObject line;
  line.AddString("scenario", "fanout")
      .AddString("part", "per_key_cost")
      .AddString("arm", arm.name)
      .AddInt("keys_per_batch", kCostKeys)
      .AddInt("batches_per_round", batches)
      .AddInt("rounds", run.config.rounds)
      .AddInt("keys", keys)
      .AddDouble("sidecar_cpu_us_per_key",
                 PerKey(total.user + total.system, keys), 2)
      .AddDouble("sidecar_user_us_per_key", PerKey(total.user, keys), 2)
      .AddDouble("sidecar_system_us_per_key", PerKey(total.system, keys), 2)
      .AddDouble("sidecar_voluntary_switches_per_key",
                 PerKey(total.voluntary_switches, keys), 3)
      .AddDouble("sidecar_involuntary_switches_per_key",
                 PerKey(total.involuntary_switches, keys), 3)
      .AddDoubleList("sidecar_cpu_us_per_key_by_round",
                     arm.cpu_us_per_key_by_round, 2)
      .AddObject("sidecar_threads", threads)
      .AddDouble("experiment_process_cpu_us_per_key", PerKey(arm.own_cpu, keys),
                 2)
      .AddDouble("item_attempts_per_key",
                 PerKey(arm.series.item_attempts, keys), 4);
  AddLatencyFields(Summarize(arm.series.batch_latencies), line, "batch_");
  PrintLine(line);
}

}  // namespace

absl::StatusOr<std::vector<CdfSeries>> RunFanoutPerKeyCost(
    const FanoutRun& run) {
  const int64_t batches = std::max<int64_t>(1, run.config.fanout.batches / 10);
  Note(absl::StrCat("fanout per-key cost: ", run.config.rounds, " rounds of ",
                    batches, " batches of ", kCostKeys,
                    " keys, ReadMany and Read calls"));
  const SidecarSetup setup =
      SetupFor(run.config, run.tailgate, run.replicas.backends());
  ArmTotals read_many{"read_many"}, read_calls{"read_calls"};
  absl::StatusOr<SidecarStats> unused = MeasureOnFreshSidecar(
      setup, ComparedPolicies()[0],
      [&](SidecarSession& session) -> absl::Status {
        absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
            ConnectChannel(session.read_address());
        if (!channel.ok()) return channel.status();
        const GrpcBatchOptions options{kFanoutInFlight, true,
                                       kFanoutBatchDeadline};
        ReadManyBatches many(*channel, options);
        ReadCallBatches calls(*channel, options);
        for (BatchTarget* target : {static_cast<BatchTarget*>(&many),
                                    static_cast<BatchTarget*>(&calls)}) {
          absl::Status warm = WarmUpTarget(*target, kCostKeys);
          if (!warm.ok()) return warm;
        }
        int64_t next_key = 1'000'000;  // past the warm-up's
        for (int round = 0; round < run.config.rounds; ++round) {
          const bool many_first = round % 2 == 0;
          for (int i = 0; i < 2; ++i) {
            const bool use_many = (i == 0) == many_first;
            absl::Status measured = MeasureRound(
                session, use_many ? static_cast<BatchTarget&>(many) : calls,
                batches, next_key, round, use_many ? read_many : read_calls);
            if (!measured.ok()) return measured;
          }
        }
        return absl::OkStatus();
      });
  if (!unused.ok()) return unused.status();
  PrintArm(run, read_many, batches);
  PrintArm(run, read_calls, batches);
  const ThreadGroupCpu many = TotalCpu(read_many.sidecar);
  const ThreadGroupCpu calls = TotalCpu(read_calls.sidecar);
  JsonObject summary;
  summary.AddString("scenario", "fanout")
      .AddString("summary", "per_key_cost")
      .AddDouble("read_many_over_read_calls_cpu",
                 Ratio(many.user + many.system, calls.user + calls.system), 3);
  std::vector<double> by_round;
  for (size_t r = 0; r < read_many.cpu_us_per_key_by_round.size(); ++r) {
    const double c = read_calls.cpu_us_per_key_by_round[r];
    by_round.push_back(c > 0 ? read_many.cpu_us_per_key_by_round[r] / c
                             : std::nan(""));
  }
  summary.AddDoubleList("read_many_over_read_calls_cpu_by_round", by_round, 3);
  PrintLine(summary);
  return std::vector<CdfSeries>{
      {"read_many", std::move(read_many.series.batch_latencies)},
      {"read_calls", std::move(read_calls.series.batch_latencies)}};
}

}  // namespace tailgate::experiment
