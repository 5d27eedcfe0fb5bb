// ExperimentConfig: the experiment's command line, parsed and validated in
// one step.
//
// Every flag is taken as text and parsed here, so that any bad value gives
// one line naming the flag ("--requests: must be at least 100, got 10") and
// main exits 2. A flag left empty takes its scenario's default; a flag that
// the chosen scenario does not use is an error rather than silently
// ignored (--rate with --scenario=seed, --sweep with throughput...).
// Defaults that differ by scenario (--rate, --duration) are filled in here
// too, so that a scenario reads one complete config.
//
// Thread safety: a function of the flags and of the CPUs the calling thread
// may run on (for --sidecar_cpus); no other state.

#ifndef TAILGATE_EXPERIMENT_CONFIG_EXPERIMENT_CONFIG_H_
#define TAILGATE_EXPERIMENT_CONFIG_EXPERIMENT_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "experiment/config/fanout_config.h"
#include "experiment/config/sick_config.h"

namespace tailgate::experiment {

enum class Scenario {
  kSeed,
  kCorrelated,
  kShifting,
  kOpenLoop,
  kThroughput,
  kChaos,
  kOverload,
  kTenants,
  kCost,
  kSick,
  kFanout,
};

// How the experiment's clients reach each sidecar: loopback TCP (the
// default, as the seed's client reached its gateway) or a Unix domain
// socket, as an application in the same pod would.
enum class SidecarTransport {
  kTcp,
  kUnix,
};

// Which of a sidecar's gRPC doors the read client calls: --listen as
// served by default (the loop front), --listen served by the gRPC library
// alone (--listen_front=grpc), or the read door on --read_listen (on the
// same transport).
enum class SidecarDoor {
  kListen,
  kGrpcFront,
  kRead,
};

// "listen", "grpc" or "read".
const char* SidecarDoorName(SidecarDoor door);

// chaos: the sidecar policies measured side by side in one run, each on a
// fresh sidecar under the same flapping schedule.
enum class ChaosArm {
  kDefaults,       // "defaults": every budget at the sidecar's default
  kNoRetryBudget,  // "no_retry_budget": the same, the retry budget at 0
};

// The flag values as given; empty means "not given".
struct RawFlags {
  std::string scenario;
  std::string requests;
  std::string warmup;
  std::string rate;
  std::string duration;
  bool sweep = false;
  std::string sweep_rates;
  std::string concurrency;
  std::string replica_down;
  std::string replica_up;
  std::string plot_dir;
  std::string tailgate;
  std::string sidecar_transport;
  std::string sidecar_door;
  std::string sidecar_cpus;
  std::string rounds;
  std::string creep_runs;
  std::string peer_gateway;
  std::string chaos_arms;
  RawSickFlags sick;      // --sick_kinds, --sick_replicas, ...
  RawFanoutFlags fanout;  // --fanout_sizes, --fanout_batches, ...
};

struct ExperimentConfig {
  Scenario scenario = Scenario::kSeed;
  // seed, correlated, shifting: measured sequential reads per policy.
  int64_t requests = 2000;
  // Every scenario: sequential fast reads per sidecar before measuring.
  int64_t warmup = 50;
  // open_loop: offered loads in req/s, one point unless --sweep; chaos,
  // overload: the one offered load; cost: the fixed loads (then it
  // saturates).
  std::vector<double> rates;
  bool sweep = false;
  // open_loop (per point and policy), throughput (per side), chaos (the
  // whole run), overload (each of its three phases).
  absl::Duration duration = absl::Seconds(5);
  // throughput: outstanding reads; cost: connections at saturation.
  int concurrency = 32;
  // chaos: how long replica A stays killed, then up, in each cycle.
  absl::Duration replica_down = absl::Milliseconds(200);
  absl::Duration replica_up = absl::Milliseconds(300);
  // chaos: the arms, in the order they run; each at most once.
  std::vector<ChaosArm> chaos_arms = {ChaosArm::kDefaults,
                                      ChaosArm::kNoRetryBudget};
  // Every scenario: the read client's way in (the admin client's is TCP).
  SidecarTransport sidecar_transport = SidecarTransport::kTcp;
  // Every scenario but cost (which reads every door in its arms): the read
  // client's door.
  SidecarDoor sidecar_door = SidecarDoor::kListen;
  // Every scenario: each sidecar's --cpus (ascending; empty: any, not
  // pinned). By default ("auto") the sequential-client scenarios (seed,
  // correlated) pin the sidecar to the last CPU the experiment may use, when
  // it may use two or more; the load scenarios need every core and pin
  // nothing.
  std::vector<int> sidecar_cpus;
  // cost: alternating rounds of every arm at every point; fanout: rounds
  // of its per-key cost part.
  int rounds = 3;
  // cost: after the rounds, saturating runs in a row on one sidecar per
  // arm, its memory read after each (0: none).
  int creep_runs = 0;
  // cost, sick, fanout: the Go gateway's binary, measured beside tailgate;
  // empty: none.
  std::string peer_gateway;
  // sick: the case matrix.
  SickConfig sick;
  // fanout: batch sizes, batches per arm, parts.
  FanoutConfig fanout;
  std::string plot_dir;  // empty: no plots
  std::string tailgate;  // empty: from the runfiles
};

inline constexpr int64_t kMinRequests = 100;
// shifting: three phases of 1500 reads.
inline constexpr int64_t kDefaultShiftingRequests = 4500;
inline constexpr double kDefaultRate = 1000;
inline constexpr double kDefaultChaosRate = 500;
inline constexpr absl::Duration kDefaultChaosDuration = absl::Seconds(10);
// Far above what a sidecar with --max_requests=16 serves on two cores.
inline constexpr double kDefaultOverloadRate = 20000;
inline constexpr double kDefaultTenantsRate = 200;  // the well-behaved tenant
inline constexpr absl::Duration kDefaultTenantsDuration = absl::Seconds(10);
// cost: the fixed offered loads measured before saturation.
inline constexpr double kDefaultCostRates[] = {1000, 4000};
// Offered loads of --sweep: from far below to beyond what two cores carry,
// closer together around 80 % of that (about 10 000 reads/s on the hosts
// measured in docs/BENCHMARKS.md).
inline constexpr double kDefaultSweepRates[] = {
    250, 500, 1000, 2000, 4000, 6000, 8000, 10000, 12000, 16000};

absl::StatusOr<ExperimentConfig> ConfigFromRawFlags(const RawFlags& flags);

// "seed", "correlated", "shifting", "open_loop", "throughput", "chaos",
// "overload", "tenants", "cost", "sick", "fanout".
const char* ScenarioName(Scenario scenario);

// "defaults", "no_retry_budget".
const char* ChaosArmName(ChaosArm arm);

// seed, correlated, shifting: one sequential client, policy after policy.
bool IsSequentialScenario(Scenario scenario);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_CONFIG_EXPERIMENT_CONFIG_H_
