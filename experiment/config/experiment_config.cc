#include "experiment/config/experiment_config.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cpus/cpu_set.h"
#include "experiment/config/config_flags.h"

namespace tailgate::experiment {
namespace {

constexpr int64_t kMaxRequests = 10'000'000;
constexpr int64_t kMaxWarmup = 100'000;
constexpr int kMaxConcurrency = 1024;
constexpr absl::Duration kMinDuration = absl::Milliseconds(100);
constexpr absl::Duration kMaxDuration = absl::Hours(1);
constexpr absl::Duration kMinReplicaPhase = absl::Milliseconds(10);
constexpr absl::Duration kMaxReplicaPhase = absl::Minutes(1);
constexpr int64_t kMaxRounds = 100;
// Scheduled sends per open-loop point: bounds the generator's memory.
constexpr double kMaxSendsPerPoint = 20'000'000;

constexpr std::pair<const char*, Scenario> kScenarios[] = {
    {"seed", Scenario::kSeed},
    {"correlated", Scenario::kCorrelated},
    {"shifting", Scenario::kShifting},
    {"open_loop", Scenario::kOpenLoop},
    {"throughput", Scenario::kThroughput},
    {"chaos", Scenario::kChaos},
    {"overload", Scenario::kOverload},
    {"tenants", Scenario::kTenants},
    {"cost", Scenario::kCost},
    {"sick", Scenario::kSick},
    {"fanout", Scenario::kFanout},
};

constexpr std::pair<const char*, ChaosArm> kChaosArms[] = {
    {"defaults", ChaosArm::kDefaults},
    {"no_retry_budget", ChaosArm::kNoRetryBudget},
};

constexpr std::pair<const char*, SidecarTransport> kTransports[] = {
    {"tcp", SidecarTransport::kTcp},
    {"unix", SidecarTransport::kUnix},
};

absl::StatusOr<std::vector<double>> ParseRateList(const std::string& text) {
  std::vector<double> rates;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    absl::StatusOr<double> rate = ParseRateFlag("sweep_rates", item);
    if (!rate.ok()) return rate.status();
    rates.push_back(*rate);
  }
  return rates;
}

absl::StatusOr<Scenario> ParseScenario(const std::string& text) {
  if (text.empty()) return Scenario::kSeed;
  std::vector<std::string> names;
  for (const auto& [name, scenario] : kScenarios) {
    if (text == name) return scenario;
    names.push_back(name);
  }
  return InvalidFlag("scenario",
                     absl::StrCat("want one of ", absl::StrJoin(names, ", "),
                                  "; got \"", text, "\""));
}

absl::StatusOr<SidecarDoor> ParseSidecarDoor(const std::string& text) {
  for (SidecarDoor door :
       {SidecarDoor::kListen, SidecarDoor::kGrpcFront, SidecarDoor::kRead}) {
    if (text == SidecarDoorName(door)) return door;
  }
  if (text.empty()) return SidecarDoor::kListen;
  return InvalidFlag(
      "sidecar_door",
      absl::StrCat("want listen, grpc or read, got \"", text, "\""));
}

absl::StatusOr<SidecarTransport> ParseSidecarTransport(
    const std::string& text) {
  if (text.empty()) return SidecarTransport::kTcp;
  for (const auto& [name, transport] : kTransports) {
    if (text == name) return transport;
  }
  return InvalidFlag("sidecar_transport",
                     absl::StrCat("want tcp or unix, got \"", text, "\""));
}

// --sidecar_cpus: "auto" (or not given), or what tailgate's --cpus takes.
// Auto pins the sidecars of the sequential-client scenarios, and of cost
// (whose load generator runs on the other CPUs), to the last CPU.
absl::StatusOr<std::vector<int>> ParseSidecarCpus(const std::string& text,
                                                  Scenario scenario) {
  if (!text.empty() && text != "auto") {
    absl::StatusOr<std::vector<int>> cpus = server::CpusToUse(text);
    if (!cpus.ok()) return InvalidFlag("sidecar_cpus", cpus.status().message());
    return cpus;
  }
  if (!IsSequentialScenario(scenario) && scenario != Scenario::kCost) {
    return std::vector<int>();
  }
  absl::StatusOr<std::vector<int>> allowed = server::AllowedCpus();
  if (!allowed.ok())
    return InvalidFlag("sidecar_cpus", allowed.status().message());
  if (allowed->size() < 2) return std::vector<int>();
  return std::vector<int>{allowed->back()};
}

// An error for the first of `flags` given although `scenario` ignores it.
absl::Status RejectUnused(
    Scenario scenario,
    std::initializer_list<std::pair<const char*, bool>> flags) {
  for (const auto& [flag, given] : flags) {
    if (given) {
      return InvalidFlag(flag, absl::StrCat("not used by --scenario=",
                                            ScenarioName(scenario)));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckScenarioFlags(Scenario scenario, const RawFlags& flags) {
  const bool straggler = IsSequentialScenario(scenario);
  const bool open_loop = scenario == Scenario::kOpenLoop;
  const bool tenants = scenario == Scenario::kTenants;
  const bool paced = open_loop || scenario == Scenario::kChaos ||
                     scenario == Scenario::kOverload || tenants;
  const bool chaos = scenario == Scenario::kChaos;
  const bool cost = scenario == Scenario::kCost;
  const bool throughput = scenario == Scenario::kThroughput || cost;
  // sick: default sidecars read on --listen over TCP, no warm-up.
  const bool sick = scenario == Scenario::kSick;
  // fanout: closed-loop batches through sidecars and the gateway.
  const bool fanout = scenario == Scenario::kFanout;
  const bool plotted =
      straggler || open_loop || tenants || chaos || sick || fanout;
  absl::Status status = RejectUnused(
      scenario,
      {{"requests", !straggler && !tenants && !flags.requests.empty()},
       {"rate", !paced && !cost && !flags.rate.empty()},
       {"rounds", !cost && !fanout && !flags.rounds.empty()},
       {"creep_runs", !cost && !flags.creep_runs.empty()},
       {"peer_gateway",
        !cost && !sick && !fanout && !flags.peer_gateway.empty()},
       {"warmup", (cost || sick) && !flags.warmup.empty()},
       {"sidecar_transport",
        (cost || sick) && !flags.sidecar_transport.empty()},
       {"sidecar_door", (cost || sick) && !flags.sidecar_door.empty()},
       {"sidecar_cpus", sick && !flags.sidecar_cpus.empty()},
       {"sick_kinds", !sick && !flags.sick.kinds.empty()},
       {"sick_replicas", !sick && !flags.sick.replicas.empty()},
       {"sick_rates", !sick && !flags.sick.rates.empty()},
       {"sick_seconds", !sick && !flags.sick.seconds.empty()},
       {"fanout_sizes", !fanout && !flags.fanout.sizes.empty()},
       {"fanout_batches", !fanout && !flags.fanout.batches.empty()},
       {"fanout_parts", !fanout && !flags.fanout.parts.empty()},
       {"fanout_coalesce", !fanout && !flags.fanout.coalesce.empty()},
       {"sweep", !open_loop && flags.sweep},
       {"sweep_rates", !open_loop && !flags.sweep_rates.empty()},
       {"duration", (straggler || sick || fanout) && !flags.duration.empty()},
       {"concurrency", !throughput && !flags.concurrency.empty()},
       {"replica_down", !chaos && !flags.replica_down.empty()},
       {"replica_up", !chaos && !flags.replica_up.empty()},
       {"chaos_arms", !chaos && !flags.chaos_arms.empty()},
       {"plot_dir", !plotted && !flags.plot_dir.empty()}});
  if (!status.ok()) return status;
  if (flags.sweep && !flags.rate.empty()) {
    return InvalidFlag("rate",
                       "a single rate and --sweep exclude each other; "
                       "give the sweep's rates with --sweep_rates");
  }
  if (!flags.sweep && !flags.sweep_rates.empty()) {
    return InvalidFlag("sweep_rates", "needs --sweep");
  }
  return absl::OkStatus();
}

// The offered load of a scenario that sends at a fixed rate, when --rate is
// not given.
double DefaultRate(Scenario scenario) {
  switch (scenario) {
    case Scenario::kChaos:
      return kDefaultChaosRate;
    case Scenario::kOverload:
      return kDefaultOverloadRate;
    case Scenario::kTenants:
      return kDefaultTenantsRate;
    default:
      return kDefaultRate;
  }
}

// --rate or --sweep[_rates], and whether each schedules a sane number of
// reads over config.duration.
absl::Status ParseRates(const RawFlags& flags, ExperimentConfig& config) {
  if (flags.sweep) {
    if (flags.sweep_rates.empty()) {
      config.rates.assign(std::begin(kDefaultSweepRates),
                          std::end(kDefaultSweepRates));
    } else {
      absl::StatusOr<std::vector<double>> rates =
          ParseRateList(flags.sweep_rates);
      if (!rates.ok()) return rates.status();
      config.rates = *std::move(rates);
    }
  } else if (flags.rate.empty() && config.scenario == Scenario::kCost) {
    config.rates.assign(std::begin(kDefaultCostRates),
                        std::end(kDefaultCostRates));
  } else if (flags.rate.empty()) {
    config.rates = {DefaultRate(config.scenario)};
  } else {
    absl::StatusOr<double> rate = ParseRateFlag("rate", flags.rate);
    if (!rate.ok()) return rate.status();
    config.rates = {*rate};
  }
  const double seconds = absl::ToDoubleSeconds(config.duration);
  for (double rate : config.rates) {
    const char* flag = flags.sweep ? "sweep_rates" : "rate";
    if (rate * seconds < 1) {
      return InvalidFlag(flag,
                         absl::StrCat(rate, " req/s for --duration=",
                                      absl::FormatDuration(config.duration),
                                      " schedules no read"));
    }
    if (rate * seconds > kMaxSendsPerPoint) {
      return InvalidFlag(
          flag,
          absl::StrCat(rate, " req/s for --duration=",
                       absl::FormatDuration(config.duration),
                       " schedules more than ", kMaxSendsPerPoint, " reads"));
    }
  }
  return absl::OkStatus();
}

// --chaos_arms: a comma-separated list of arm names, each at most once.
absl::StatusOr<std::vector<ChaosArm>> ParseChaosArms(const std::string& text) {
  std::vector<ChaosArm> arms;
  for (absl::string_view name : absl::StrSplit(text, ',')) {
    const auto* known =
        std::find_if(std::begin(kChaosArms), std::end(kChaosArms),
                     [name](const auto& arm) { return name == arm.first; });
    if (known == std::end(kChaosArms)) {
      return InvalidFlag("chaos_arms",
                         absl::StrCat("want a comma-separated list of defaults "
                                      "and no_retry_budget, got \"",
                                      text, "\""));
    }
    if (std::find(arms.begin(), arms.end(), known->second) != arms.end()) {
      return InvalidFlag(
          "chaos_arms",
          absl::StrCat(known->first, " is listed twice in \"", text, "\""));
    }
    arms.push_back(known->second);
  }
  return arms;
}

// --replica_down, --replica_up and --chaos_arms. A first kill comes after
// one up phase, so that phase must end within the run.
absl::Status ParseChaos(const RawFlags& flags, ExperimentConfig& config) {
  if (!flags.chaos_arms.empty()) {
    absl::StatusOr<std::vector<ChaosArm>> arms =
        ParseChaosArms(flags.chaos_arms);
    if (!arms.ok()) return arms.status();
    config.chaos_arms = *std::move(arms);
  }
  absl::Status status =
      ParseGivenDuration("replica_down", flags.replica_down, kMinReplicaPhase,
                         kMaxReplicaPhase, config.replica_down);
  if (!status.ok()) return status;
  status = ParseGivenDuration("replica_up", flags.replica_up, kMinReplicaPhase,
                              kMaxReplicaPhase, config.replica_up);
  if (!status.ok()) return status;
  if (config.replica_up >= config.duration) {
    return InvalidFlag("replica_up",
                       absl::StrCat("must be shorter than --duration=",
                                    absl::FormatDuration(config.duration),
                                    ", or replica A is never killed; got ",
                                    absl::FormatDuration(config.replica_up)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ParseWarmup(const std::string& text) {
  absl::StatusOr<int64_t> warmup =
      ParseIntegerFlag("warmup", text, 0, kMaxWarmup);
  if (!warmup.ok()) return warmup.status();
  // The sidecar rotates its primary per admitted read; an even warm-up
  // keeps the first measured read on replica A, as on a fresh sidecar.
  if (*warmup % 2 != 0) {
    return InvalidFlag("warmup",
                       absl::StrCat("must be even, so that the sidecar's "
                                    "primary rotation starts the measured "
                                    "reads on replica A; got ",
                                    *warmup));
  }
  return warmup;
}

}  // namespace

const char* SidecarDoorName(SidecarDoor door) {
  switch (door) {
    case SidecarDoor::kListen:
      return "listen";
    case SidecarDoor::kGrpcFront:
      return "grpc";
    case SidecarDoor::kRead:
      return "read";
  }
  return "?";
}

bool IsSequentialScenario(Scenario scenario) {
  return scenario == Scenario::kSeed || scenario == Scenario::kCorrelated ||
         scenario == Scenario::kShifting;
}

const char* ChaosArmName(ChaosArm arm) {
  for (const auto& [name, value] : kChaosArms) {
    if (value == arm) return name;
  }
  return "unknown";
}

const char* ScenarioName(Scenario scenario) {
  for (const auto& [name, value] : kScenarios) {
    if (value == scenario) return name;
  }
  return "unknown";
}

absl::StatusOr<ExperimentConfig> ConfigFromRawFlags(const RawFlags& flags) {
  ExperimentConfig config;
  absl::StatusOr<Scenario> scenario = ParseScenario(flags.scenario);
  if (!scenario.ok()) return scenario.status();
  config.scenario = *scenario;
  absl::Status status = CheckScenarioFlags(config.scenario, flags);
  if (!status.ok()) return status;

  if (config.scenario == Scenario::kShifting) {
    config.requests = kDefaultShiftingRequests;
  }
  if (!flags.requests.empty()) {
    absl::StatusOr<int64_t> requests =
        ParseIntegerFlag("requests", flags.requests, kMinRequests, kMaxRequests,
                         "(fewer samples cannot support a p99)");
    if (!requests.ok()) return requests.status();
    config.requests = *requests;
  }
  if (!flags.warmup.empty()) {
    absl::StatusOr<int64_t> warmup = ParseWarmup(flags.warmup);
    if (!warmup.ok()) return warmup.status();
    config.warmup = *warmup;
  }
  if (config.scenario == Scenario::kChaos) {
    config.duration = kDefaultChaosDuration;
  }
  if (config.scenario == Scenario::kTenants) {
    config.duration = kDefaultTenantsDuration;
  }
  status = ParseGivenDuration("duration", flags.duration, kMinDuration,
                              kMaxDuration, config.duration);
  if (!status.ok()) return status;
  if (!flags.concurrency.empty()) {
    absl::StatusOr<int64_t> concurrency =
        ParseIntegerFlag("concurrency", flags.concurrency, 1, kMaxConcurrency);
    if (!concurrency.ok()) return concurrency.status();
    config.concurrency = static_cast<int>(*concurrency);
  }
  if (config.scenario == Scenario::kOpenLoop ||
      config.scenario == Scenario::kChaos ||
      config.scenario == Scenario::kOverload ||
      config.scenario == Scenario::kTenants ||
      config.scenario == Scenario::kCost) {
    config.sweep = flags.sweep;
    status = ParseRates(flags, config);
    if (!status.ok()) return status;
  }
  if (config.scenario == Scenario::kChaos) {
    status = ParseChaos(flags, config);
    if (!status.ok()) return status;
  }
  absl::StatusOr<SidecarTransport> transport =
      ParseSidecarTransport(flags.sidecar_transport);
  if (!transport.ok()) return transport.status();
  config.sidecar_transport = *transport;
  absl::StatusOr<SidecarDoor> door = ParseSidecarDoor(flags.sidecar_door);
  if (!door.ok()) return door.status();
  config.sidecar_door = *door;
  absl::StatusOr<std::vector<int>> cpus =
      ParseSidecarCpus(flags.sidecar_cpus, config.scenario);
  if (!cpus.ok()) return cpus.status();
  config.sidecar_cpus = *std::move(cpus);
  if (!flags.rounds.empty()) {
    absl::StatusOr<int64_t> rounds =
        ParseIntegerFlag("rounds", flags.rounds, 1, kMaxRounds);
    if (!rounds.ok()) return rounds.status();
    config.rounds = static_cast<int>(*rounds);
  }
  if (!flags.creep_runs.empty()) {
    absl::StatusOr<int64_t> runs =
        ParseIntegerFlag("creep_runs", flags.creep_runs, 0, kMaxRounds);
    if (!runs.ok()) return runs.status();
    config.creep_runs = static_cast<int>(*runs);
  }
  if (config.scenario == Scenario::kSick) {
    absl::StatusOr<SickConfig> sick = ParseSickConfig(flags.sick);
    if (!sick.ok()) return sick.status();
    config.sick = *std::move(sick);
  }
  if (config.scenario == Scenario::kFanout) {
    absl::StatusOr<FanoutConfig> fanout = ParseFanoutConfig(flags.fanout);
    if (!fanout.ok()) return fanout.status();
    config.fanout = *std::move(fanout);
  }
  config.peer_gateway = flags.peer_gateway;
  if (!config.peer_gateway.empty() &&
      access(config.peer_gateway.c_str(), X_OK) != 0) {
    return InvalidFlag("peer_gateway", absl::StrCat("not an executable file: ",
                                                    flags.peer_gateway));
  }
  config.plot_dir = flags.plot_dir;
  config.tailgate = flags.tailgate;
  return config;
}

}  // namespace tailgate::experiment
