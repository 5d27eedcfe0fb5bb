// cost: what the sidecar costs an application per read, measured from
// outside. One nginx serves two fast loopback replicas; h2load, a separate
// process, reads through each arm at fixed offered loads and at saturation:
//   direct    h2load reads nginx itself (HTTP/1.1): the floor
//   tailgate  a fresh tailgate with its default flags, through its gRPC
//             HedgedRead door (h2c, a pre-encoded ReadRequest)
//   http_door the same with --http_listen, through its plain-HTTP door
//             (HTTP/1.1 GET, as for direct and the gateway)
//   gateway   with --peer_gateway: a fresh Go gateway (the predecessor),
//             HTTP/1.1, its default flags
// Each arm, at each point, in each round: start the sidecar, warm it up
// (one second of the same load), run the measured load and read its CPU
// time (utime + stime), resident memory (anonymous and file-backed) and
// thread count around it, then its CPU and memory over three quiet seconds
// after it. The arm order reverses every round. A JSON line per
// measurement; at the end a summary line per point with medians over the
// rounds and the ratios that matter: tailgate's CPU per read and added mean
// latency against the gateway's, and reads/s against nginx direct, each
// paired within a round. With --creep_runs, then saturating runs in a row
// on one sidecar per arm but http_door (cost_creep.h). Arms: cost_arms.h.
//
// Pinning (--sidecar_cpus, default the last allowed CPU): the sidecars run
// there, nginx and h2load on the other CPUs.

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/admin_client.h"
#include "cpus/cpu_set.h"
#include "experiment/load/progress.h"
#include "experiment/measure/process_usage.h"
#include "experiment/replicas/nginx_replicas.h"
#include "experiment/report/json_line.h"
#include "experiment/report/report.h"
#include "experiment/scenarios/cost_arms.h"
#include "experiment/scenarios/cost_creep.h"
#include "experiment/scenarios/scenarios.h"

namespace tailgate::experiment {
namespace {

// One measured line's figures, kept for the summary.
struct Figures {
  double reads_per_second = 0;
  double mean_latency_us = 0;
  double cpu_us_per_read = 0;
  double rss_end_mib = 0;    // as the run ends
  double rss_quiet_mib = 0;  // after the quiet window
};

absl::StatusOr<Figures> MeasureOne(const Setup& setup, ArmKind kind,
                                   const Point& point, int round,
                                   absl::Duration duration) {
  absl::StatusOr<RunningArm> arm = StartArm(setup, kind);
  if (!arm.ok()) return arm.status();
  absl::StatusOr<H2loadReport> warm =
      RunH2load(setup, *arm, point, kCostWarmup);
  if (!warm.ok()) return warm.status();

  JsonObject line;
  line.AddString("scenario", "cost")
      .AddString("arm", ArmName(kind))
      .AddString("point", point.name)
      .AddInt("round", round)
      .AddInt("connections", point.connections)
      .AddInt("streams", arm->grpc ? point.grpc_streams : 1);
  std::optional<ProcessUsage> before;
  std::optional<SidecarStats> stats_before;
  if (arm->pid != 0) {
    absl::StatusOr<ProcessUsage> usage = ReadProcessUsage(arm->pid);
    if (!usage.ok()) return usage.status();
    before = *usage;
    if (arm->admin != nullptr) {
      absl::StatusOr<SidecarStats> stats = arm->admin->GetStats();
      if (!stats.ok()) return stats.status();
      stats_before = *stats;
    }
  }
  absl::StatusOr<H2loadReport> report =
      RunH2load(setup, *arm, point, duration);
  if (!report.ok()) return report.status();
  Figures figures;
  figures.reads_per_second = report->reads_per_second;
  figures.mean_latency_us = absl::ToDoubleMicroseconds(report->mean_latency);
  line.AddDouble("reads_per_s", report->reads_per_second, 1)
      .AddInt("done", report->done)
      .AddInt("failed", report->failed)
      .AddInt("non_2xx", report->non_2xx)
      .AddDouble("mean_latency_us", figures.mean_latency_us, 1);
  if (before.has_value()) {
    absl::StatusOr<ProcessUsage> after = ReadProcessUsage(arm->pid);
    if (!after.ok()) return after.status();
    const absl::Duration cpu = after->cpu - before->cpu;
    figures.cpu_us_per_read =
        report->done > 0
            ? absl::ToDoubleMicroseconds(cpu) / static_cast<double>(report->done)
            : 0;
    // Then quiet: what the sidecar costs once the app stops reading.
    absl::SleepFor(kCostQuietWindow);
    absl::StatusOr<ProcessUsage> quiet = ReadProcessUsage(arm->pid);
    if (!quiet.ok()) return quiet.status();
    figures.rss_end_mib = after->rss_kib / 1024.0;
    figures.rss_quiet_mib = quiet->rss_kib / 1024.0;
    line.AddDouble("sidecar_cpu_s", absl::ToDoubleSeconds(cpu), 2)
        .AddDouble("sidecar_cpu_us_per_read", figures.cpu_us_per_read, 1)
        .AddInt("threads", after->threads)
        .AddInt("rss_kib", after->rss_kib)
        .AddInt("rss_anon_kib", after->rss_anon_kib)
        .AddInt("rss_file_kib", after->rss_file_kib)
        .AddDouble("quiet_cpu_percent",
                   100 * ((quiet->cpu - after->cpu) / kCostQuietWindow), 2)
        .AddInt("quiet_rss_kib", quiet->rss_kib)
        .AddInt("quiet_rss_anon_kib", quiet->rss_anon_kib)
        .AddInt("quiet_threads", quiet->threads);
  }
  if (stats_before.has_value()) {
    // h2load counts every 200 as a success; a gRPC error is one too.
    absl::StatusOr<SidecarStats> stats = arm->admin->GetStats();
    if (!stats.ok()) return stats.status();
    line.AddObject("metrics", MetricsJson(StatsDelta(*stats_before, *stats)));
  }
  PrintLine(line);
  absl::Status stopped = StopArm(*arm);
  if (!stopped.ok()) return stopped;
  return figures;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Per point, per arm, per round.
using Results = std::map<std::string, std::map<ArmKind, std::map<int, Figures>>>;

// Paired within each round: f(arm's figures, direct's figures).
template <typename F>
std::vector<double> Paired(const std::map<ArmKind, std::map<int, Figures>>& by,
                           ArmKind a, ArmKind b, F f) {
  std::vector<double> out;
  if (!by.count(a) || !by.count(b)) return out;
  for (const auto& [round, figures] : by.at(a)) {
    auto other = by.at(b).find(round);
    if (other != by.at(b).end()) out.push_back(f(figures, other->second));
  }
  return out;
}

void PrintSummary(const Results& results, bool with_gateway) {
  for (const auto& [point, by] : results) {
    JsonObject line;
    line.AddString("scenario", "cost").AddString("summary", point);
    for (ArmKind arm : {ArmKind::kTailgate, ArmKind::kGrpcFront,
                        ArmKind::kHttpDoor, ArmKind::kGateway}) {
      if (!by.count(arm)) continue;
      std::vector<double> cpu, rss_end, rss_quiet;
      for (const auto& [round, f] : by.at(arm)) {
        cpu.push_back(f.cpu_us_per_read);
        rss_end.push_back(f.rss_end_mib);
        rss_quiet.push_back(f.rss_quiet_mib);
      }
      const std::string name = ArmName(arm);
      line.AddDouble(name + "_cpu_us_per_read", Median(cpu), 1)
          .AddDouble(name + "_rss_end_mib", Median(rss_end), 1)
          .AddDouble(name + "_rss_quiet_mib", Median(rss_quiet), 1)
          .AddDouble(name + "_added_mean_us",
                     Median(Paired(by, arm, ArmKind::kDirect,
                                   [](const Figures& a, const Figures& d) {
                                     return a.mean_latency_us -
                                            d.mean_latency_us;
                                   })),
                     1)
          .AddDouble(name + "_reads_ratio_to_direct",
                     Median(Paired(by, arm, ArmKind::kDirect,
                                   [](const Figures& a, const Figures& d) {
                                     return a.reads_per_second /
                                            d.reads_per_second;
                                   })),
                     3);
    }
    if (with_gateway) {
      line.AddDouble("cpu_per_read_ratio",
                     Median(Paired(by, ArmKind::kTailgate, ArmKind::kGateway,
                                   [](const Figures& t, const Figures& g) {
                                     return t.cpu_us_per_read /
                                            g.cpu_us_per_read;
                                   })),
                     3)
          .AddDouble("rss_end_ratio",
                     Median(Paired(by, ArmKind::kTailgate, ArmKind::kGateway,
                                   [](const Figures& t, const Figures& g) {
                                     return t.rss_end_mib / g.rss_end_mib;
                                   })),
                     3)
          .AddDouble("grpc_front_cpu_per_read_ratio",
                     Median(Paired(by, ArmKind::kGrpcFront, ArmKind::kGateway,
                                   [](const Figures& t, const Figures& g) {
                                     return t.cpu_us_per_read /
                                            g.cpu_us_per_read;
                                   })),
                     3)
          .AddDouble("http_door_cpu_per_read_ratio",
                     Median(Paired(by, ArmKind::kHttpDoor, ArmKind::kGateway,
                                   [](const Figures& t, const Figures& g) {
                                     return t.cpu_us_per_read /
                                            g.cpu_us_per_read;
                                   })),
                     3);
    }
    PrintLine(line);
  }
}

absl::StatusOr<std::string> MakeWorkDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string pattern =
      absl::StrCat(base != nullptr ? base : "/tmp", "/tailgate-cost-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError("cannot make a work directory");
  }
  return pattern;
}

// The CPUs nginx and h2load may use: the allowed ones the sidecars are not
// pinned to (all allowed ones when the sidecars are not pinned).
absl::StatusOr<std::vector<std::string>> LoadLauncher(
    const std::vector<int>& sidecar_cpus) {
  if (sidecar_cpus.empty()) return std::vector<std::string>();
  absl::StatusOr<std::vector<int>> allowed = server::AllowedCpus();
  if (!allowed.ok()) return allowed.status();
  std::vector<int> rest;
  for (int cpu : *allowed) {
    if (std::find(sidecar_cpus.begin(), sidecar_cpus.end(), cpu) ==
        sidecar_cpus.end()) {
      rest.push_back(cpu);
    }
  }
  if (rest.empty()) return std::vector<std::string>();
  return std::vector<std::string>{"taskset", "-c", absl::StrJoin(rest, ",")};
}

}  // namespace

absl::Status RunCostScenario(const ExperimentConfig& config,
                             const std::string& tailgate) {
  Setup setup;
  absl::StatusOr<std::string> dir = MakeWorkDir();
  if (!dir.ok()) return dir.status();
  setup.work_dir = *dir;
  setup.tailgate_binary = tailgate;
  setup.gateway_binary = config.peer_gateway;
  setup.sidecar_cpus = config.sidecar_cpus;
  absl::StatusOr<std::vector<std::string>> launcher =
      LoadLauncher(config.sidecar_cpus);
  if (!launcher.ok()) return launcher.status();
  setup.load_launcher = *launcher;
  // ReadRequest{path: "/v.txt"} in a gRPC frame: uncompressed, 8 bytes.
  {
    std::ofstream body(setup.work_dir + "/read.bin", std::ios::binary);
    body << std::string("\0\0\0\0\x08\x0a\x06/v.txt", 13);
  }
  absl::StatusOr<std::unique_ptr<NginxReplicas>> replicas =
      NginxReplicas::Start(setup.work_dir, setup.load_launcher);
  if (!replicas.ok()) return replicas.status();
  setup.replicas = replicas->get();

  std::vector<ArmKind> arms = {ArmKind::kDirect, ArmKind::kTailgate,
                               ArmKind::kGrpcFront, ArmKind::kHttpDoor};
  if (!setup.gateway_binary.empty()) arms.push_back(ArmKind::kGateway);
  Results results;
  for (int round = 1; round <= config.rounds; ++round) {
    for (const Point& point : PointsFor(config)) {
      std::vector<ArmKind> order = arms;
      if (round % 2 == 0) std::reverse(order.begin(), order.end());
      for (ArmKind arm : order) {
        Note(absl::StrCat("cost round ", round, " ", point.name, " ",
                          ArmName(arm)));
        absl::StatusOr<Figures> figures =
            MeasureOne(setup, arm, point, round, config.duration);
        if (!figures.ok()) return figures.status();
        results[point.name][arm][round] = *figures;
      }
    }
  }
  PrintSummary(results, !setup.gateway_binary.empty());
  if (config.creep_runs > 0) {
    const Point saturation = PointsFor(config).back();
    for (ArmKind arm : arms) {
      // Both gRPC fronts' sidecars creep-tested (they hold 128 reads at
      // saturation); the HTTP door's is the same process with one listener
      // more and, in the rounds, less memory after a burst (32 reads), so
      // the gRPC fronts' are the upper bound.
      if (arm == ArmKind::kDirect || arm == ArmKind::kHttpDoor) continue;
      absl::Status status = MeasureCreep(setup, arm, saturation,
                                         config.creep_runs, config.duration);
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace tailgate::experiment