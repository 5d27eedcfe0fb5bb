// experiment: Tailgate's straggler experiment and load generators.
//
//   bazel run -c opt //experiment                       # the seed's experiment
//   bazel run -c opt //experiment -- --scenario=shifting
//   bazel run -c opt //experiment -- --scenario=open_loop --sweep
//   bazel run -c opt //experiment -- --scenario=chaos
//   bazel run -c opt //experiment -- --scenario=overload
//   bazel run -c opt //experiment -- --scenario=sick --peer_gateway=GATEWAY
//   bazel run -c opt //experiment -- --scenario=fanout --peer_gateway=GATEWAY
//
// "The seed", throughout the experiment, is the Go hedging gateway Tailgate
// succeeds: the default scenario (seed) reproduces its straggler study,
// with the same workload, policies and output fields.
//
// Starts two embedded loopback replicas and, per policy, a fresh `tailgate`
// sidecar as a child process; prints one JSON line per result on stdout
// and progress on stderr. README.md describes the scenarios and flags.
//
// Exit codes: 0 done; 1 the run failed (a wrong answer, a sidecar that did
// not start, a failed read under chaos...); 2 a bad command line, with one
// line naming the flag. Stopped by SIGINT, SIGTERM or SIGHUP, it first
// stops every program it started (stop_children.h), then ends by that
// signal.

#include <curl/curl.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "experiment/config/experiment_config.h"
#include "experiment/report/plots.h"
#include "experiment/scenarios/scenarios.h"
#include "experiment/stop_children.h"
#include "experiment/tailgate_binary.h"

// Taken as text and validated by ConfigFromRawFlags; empty = the default.
ABSL_FLAG(std::string, scenario, "",
          "seed (default), correlated, shifting, open_loop, throughput, "
          "chaos, overload, tenants, cost, sick or fanout.");
ABSL_FLAG(std::string, requests, "",
          "seed, correlated, shifting: measured sequential reads per policy "
          "(default 2000; shifting 4500, in three phases; at least 100); "
          "tenants: the well-behaved tenant's sequential reads in the "
          "closed-loop part, alone and flooded (default 2000).");
ABSL_FLAG(std::string, warmup, "",
          "Uncounted fast reads on each fresh sidecar before measuring "
          "(default 50; even).");
ABSL_FLAG(std::string, rate, "",
          "open_loop, chaos, overload, tenants: offered load in reads per "
          "second (default 1000; chaos 500; overload 20000, in its overload "
          "phase; tenants 200, the well-behaved tenant's, the flood 4 "
          "times that); cost: the one fixed load before saturation (default "
          "1000 and 4000).");
ABSL_FLAG(std::string, duration, "",
          "open_loop: sending time per point and policy; throughput: "
          "measuring time per side; chaos: the whole run (default 10s); "
          "overload: each of its three phases (default 5s); tenants: each "
          "of its three modes (default 10s); cost: each measured run.");
ABSL_FLAG(bool, sweep, false,
          "open_loop: run a series of offered loads instead of --rate.");
ABSL_FLAG(std::string, sweep_rates, "",
          "open_loop --sweep: comma-separated offered loads in req/s "
          "(default 250,500,1000,2000,4000,6000,8000,10000,12000,16000).");
ABSL_FLAG(std::string, concurrency, "",
          "throughput: outstanding reads, through the sidecar and direct "
          "(default 32); cost: connections at saturation (default 32).");
ABSL_FLAG(std::string, rounds, "",
          "cost: rounds of every arm at every load, in alternating order "
          "(default 3); fanout: rounds of its per-key cost part (default "
          "3).");
ABSL_FLAG(std::string, creep_runs, "",
          "cost: after the rounds, this many saturating runs in a row on "
          "one sidecar per arm, memory read after each and after 3 quiet "
          "seconds: whether it creeps (default 0: none; at most 100).");
ABSL_FLAG(std::string, peer_gateway, "",
          "cost, sick, fanout: the Go gateway's binary, measured beside "
          "tailgate in the same rounds / cases / batches (default: none).");
ABSL_FLAG(std::string, sick_kinds, "",
          "sick: how the last replica is sick, a comma-separated list of "
          "hang, gray, slow, heal (default all four).");
ABSL_FLAG(std::string, sick_replicas, "",
          "sick: replicas per case, a comma-separated list, each at least 2 "
          "(default 2,3).");
ABSL_FLAG(std::string, sick_rates, "",
          "sick: the steady reader's rates in reads per second, a "
          "comma-separated list (default 2,20).");
ABSL_FLAG(std::string, sick_seconds, "",
          "sick: seconds of reads per case and target (default 30).");
ABSL_FLAG(std::string, fanout_sizes, "",
          "fanout: keys per batch, a comma-separated list, each 1 to 1000 "
          "(default 100,1000).");
ABSL_FLAG(std::string, fanout_batches, "",
          "fanout: batches per arm and batch size (default 2000; at least "
          "5). The per-key cost part runs a tenth of them per round and arm, "
          "the hot-key part a quarter per reader.");
ABSL_FLAG(std::string, fanout_parts, "",
          "fanout: which parts run, a comma-separated list of batches, "
          "per_key_cost, hot_keys (default all three).");
ABSL_FLAG(std::string, fanout_coalesce, "",
          "fanout: whether the hot-key part also runs a sidecar with "
          "--coalesce: auto (default: when the tailgate binary takes the "
          "flag; reported as skipped otherwise), true or false.");
ABSL_FLAG(std::string, replica_down, "",
          "chaos: how long replica A stays killed in each cycle (default "
          "200ms).");
ABSL_FLAG(std::string, replica_up, "",
          "chaos: how long replica A runs between kills (default 300ms).");
ABSL_FLAG(std::string, chaos_arms, "",
          "chaos: the sidecar policies run side by side, in this order, "
          "each on a fresh sidecar under the same kill schedule: defaults "
          "(every budget at its default), no_retry_budget (the same with "
          "--retry_fraction=0 --retry_per_second=0); default both.");
ABSL_FLAG(std::string, plot_dir, "",
          "Write PNG plots (and their gnuplot data and scripts) here; needs "
          "/usr/bin/gnuplot.");
ABSL_FLAG(std::string, sidecar_transport, "",
          "How the read client reaches each sidecar: tcp (default, loopback) "
          "or unix (a Unix domain socket in $TMPDIR, or /tmp if that is "
          "unset or too long).");
ABSL_FLAG(std::string, sidecar_door, "",
          "Which gRPC door of each sidecar the read client calls: listen "
          "(default: --listen, served by its loop front), grpc (--listen "
          "served by the gRPC library, --listen_front=grpc) or read (the read "
          "door, --read_listen), over --sidecar_transport. Not for "
          "--scenario=cost, which reads every door.");
ABSL_FLAG(std::string, sidecar_cpus, "",
          "CPUs each sidecar runs on: auto (default: for seed and "
          "correlated and cost, the last CPU this process may use, given two "
          "or more; "
          "for the others, any), or what tailgate's --cpus takes (any, last, "
          "or a list such as 1 or 0-1).");
ABSL_FLAG(std::string, tailgate, "",
          "Path of the tailgate binary (default: //server:tailgate from the "
          "runfiles).");

namespace tailgate::experiment {
namespace {

RawFlags RawFlagsFromCommandLine() {
  RawFlags flags;
  flags.scenario = absl::GetFlag(FLAGS_scenario);
  flags.requests = absl::GetFlag(FLAGS_requests);
  flags.warmup = absl::GetFlag(FLAGS_warmup);
  flags.rate = absl::GetFlag(FLAGS_rate);
  flags.duration = absl::GetFlag(FLAGS_duration);
  flags.sweep = absl::GetFlag(FLAGS_sweep);
  flags.sweep_rates = absl::GetFlag(FLAGS_sweep_rates);
  flags.concurrency = absl::GetFlag(FLAGS_concurrency);
  flags.replica_down = absl::GetFlag(FLAGS_replica_down);
  flags.replica_up = absl::GetFlag(FLAGS_replica_up);
  flags.chaos_arms = absl::GetFlag(FLAGS_chaos_arms);
  flags.plot_dir = absl::GetFlag(FLAGS_plot_dir);
  flags.tailgate = absl::GetFlag(FLAGS_tailgate);
  flags.sidecar_transport = absl::GetFlag(FLAGS_sidecar_transport);
  flags.sidecar_door = absl::GetFlag(FLAGS_sidecar_door);
  flags.sidecar_cpus = absl::GetFlag(FLAGS_sidecar_cpus);
  flags.rounds = absl::GetFlag(FLAGS_rounds);
  flags.creep_runs = absl::GetFlag(FLAGS_creep_runs);
  flags.peer_gateway = absl::GetFlag(FLAGS_peer_gateway);
  flags.sick.kinds = absl::GetFlag(FLAGS_sick_kinds);
  flags.sick.replicas = absl::GetFlag(FLAGS_sick_replicas);
  flags.sick.rates = absl::GetFlag(FLAGS_sick_rates);
  flags.sick.seconds = absl::GetFlag(FLAGS_sick_seconds);
  flags.fanout.sizes = absl::GetFlag(FLAGS_fanout_sizes);
  flags.fanout.batches = absl::GetFlag(FLAGS_fanout_batches);
  flags.fanout.parts = absl::GetFlag(FLAGS_fanout_parts);
  flags.fanout.coalesce = absl::GetFlag(FLAGS_fanout_coalesce);
  return flags;
}

int Fail(int code, const absl::Status& status) {
  std::fprintf(stderr, "experiment: %s\n",
               std::string(status.message()).c_str());
  return code;
}

absl::Status RunScenario(const ExperimentConfig& config,
                         const std::string& tailgate) {
  switch (config.scenario) {
    case Scenario::kSeed:
    case Scenario::kCorrelated:
    case Scenario::kShifting:
      return RunStragglerScenario(config, tailgate);
    case Scenario::kOpenLoop:
      return RunOpenLoopScenario(config, tailgate);
    case Scenario::kThroughput:
      return RunThroughputScenario(config, tailgate);
    case Scenario::kChaos:
      return RunChaosScenario(config, tailgate);
    case Scenario::kOverload:
      return RunOverloadScenario(config, tailgate);
    case Scenario::kTenants:
      return RunTenantsScenario(config, tailgate);
    case Scenario::kCost:
      return RunCostScenario(config, tailgate);
    case Scenario::kSick:
      return RunSickScenario(config, tailgate);
    case Scenario::kFanout:
      return RunFanoutScenario(config, tailgate);
  }
  return absl::InternalError("unknown scenario");
}

int Main(const std::string& argv0) {
  absl::StatusOr<ExperimentConfig> config =
      ConfigFromRawFlags(RawFlagsFromCommandLine());
  if (!config.ok()) return Fail(2, config.status());
  if (!config->plot_dir.empty()) {
    absl::Status plots = PreparePlotDir(config->plot_dir);
    if (!plots.ok()) return Fail(2, plots);
  }
  absl::StatusOr<std::string> tailgate =
      FindTailgateBinary(argv0, config->tailgate);
  if (!tailgate.ok()) {
    // A bad --tailgate is a command-line error; missing runfiles are not.
    return Fail(config->tailgate.empty() ? 1 : 2, tailgate.status());
  }

  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    return Fail(1, absl::InternalError("curl_global_init failed"));
  }
  const absl::Status run = RunScenario(*config, *tailgate);
  curl_global_cleanup();
  return run.ok() ? 0 : Fail(1, run);
}

}  // namespace
}  // namespace tailgate::experiment

int main(int argc, char** argv) {
  // Before any thread: a stop signal also stops the programs it runs.
  tailgate::experiment::StopChildrenOnSignal();
  absl::SetProgramUsageMessage(
      "Tailgate's straggler experiment: embedded replicas, a fresh sidecar "
      "per policy, JSON lines on stdout.\n"
      "  experiment "
      "[--scenario=seed|correlated|shifting|open_loop|throughput|chaos|"
      "overload|tenants|cost|sick|fanout] "
      "[--flags]");
  const std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 1) {
    std::fprintf(stderr,
                 "experiment: unexpected argument \"%s\" (every setting is "
                 "a --flag)\n",
                 args[1]);
    return 2;
  }
  return tailgate::experiment::ExitCodeUnlessStopping(
      tailgate::experiment::Main(argv[0]));
}
