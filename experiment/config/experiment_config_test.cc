#include "experiment/config/experiment_config.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cpus/cpu_set.h"
#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

// The error message of parsing `flags`, which must fail.
std::string ErrorOf(const RawFlags& flags) {
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  EXPECT_FALSE(config.ok());
  return config.ok() ? "" : std::string(config.status().message());
}

TEST(ExperimentConfigTest, DefaultsAreTheSeedExperiment) {
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->scenario, Scenario::kSeed);
  EXPECT_EQ(config->requests, 2000);
  EXPECT_EQ(config->warmup, 50);
  EXPECT_TRUE(config->plot_dir.empty());
  EXPECT_EQ(config->sidecar_transport, SidecarTransport::kTcp);
}

TEST(ExperimentConfigTest, SidecarTransportForEveryScenario) {
  for (const char* scenario : {"seed", "open_loop", "throughput", "chaos"}) {
    RawFlags flags;
    flags.scenario = scenario;
    flags.sidecar_transport = "unix";
    absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
    ASSERT_TRUE(config.ok()) << scenario << ": " << config.status();
    EXPECT_EQ(config->sidecar_transport, SidecarTransport::kUnix) << scenario;
  }
  RawFlags flags;
  flags.sidecar_transport = "tcp";
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sidecar_transport, SidecarTransport::kTcp);
  flags.sidecar_transport = "UDS";
  EXPECT_EQ(ErrorOf(flags),
            "--sidecar_transport: want tcp or unix, got \"UDS\"");
}

TEST(ExperimentConfigTest, SidecarDoorForEveryScenarioButCost) {
  EXPECT_EQ(ConfigFromRawFlags({})->sidecar_door, SidecarDoor::kListen);
  for (const char* scenario : {"seed", "open_loop", "throughput", "chaos"}) {
    RawFlags flags;
    flags.scenario = scenario;
    flags.sidecar_door = "read";
    absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
    ASSERT_TRUE(config.ok()) << scenario << ": " << config.status();
    EXPECT_EQ(config->sidecar_door, SidecarDoor::kRead) << scenario;
  }
  RawFlags flags;
  flags.sidecar_door = "grpc";
  ASSERT_TRUE(ConfigFromRawFlags(flags).ok());
  EXPECT_EQ(ConfigFromRawFlags(flags)->sidecar_door, SidecarDoor::kGrpcFront);
  flags.sidecar_door = "listen";
  EXPECT_EQ(ConfigFromRawFlags(flags)->sidecar_door, SidecarDoor::kListen);
  flags.sidecar_door = "http";
  EXPECT_EQ(ErrorOf(flags),
            "--sidecar_door: want listen, grpc or read, got \"http\"");
  flags.sidecar_door = "read";
  flags.scenario = "cost";
  EXPECT_NE(ErrorOf(flags).find("--sidecar_door"), std::string::npos)
      << ErrorOf(flags);
}

TEST(ExperimentConfigTest, SidecarCpusAutoPinsOnlyTheSequentialScenarios) {
  absl::StatusOr<std::vector<int>> allowed = server::AllowedCpus();
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  const std::vector<int> pinned = allowed->size() >= 2
                                      ? std::vector<int>{allowed->back()}
                                      : std::vector<int>{};
  for (const char* cpus : {"", "auto"}) {
    for (const char* scenario : {"seed", "correlated"}) {
      RawFlags flags;
      flags.scenario = scenario;
      flags.sidecar_cpus = cpus;
      absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
      ASSERT_TRUE(config.ok()) << scenario << ": " << config.status();
      EXPECT_EQ(config->sidecar_cpus, pinned) << scenario;
    }
    for (const char* scenario :
         {"open_loop", "throughput", "chaos", "overload"}) {
      RawFlags flags;
      flags.scenario = scenario;
      flags.sidecar_cpus = cpus;
      absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
      ASSERT_TRUE(config.ok()) << scenario << ": " << config.status();
      EXPECT_TRUE(config->sidecar_cpus.empty()) << scenario;
    }
  }
}

TEST(ExperimentConfigTest, SidecarCpusTakesWhatTailgatesCpusTakes) {
  absl::StatusOr<std::vector<int>> allowed = server::AllowedCpus();
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  RawFlags flags;
  flags.sidecar_cpus = "any";
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->sidecar_cpus.empty());

  flags.scenario = "throughput";
  flags.sidecar_cpus = "last";
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sidecar_cpus, std::vector<int>{allowed->back()});
  flags.sidecar_cpus = server::FormatCpuList({allowed->front()});
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sidecar_cpus, std::vector<int>{allowed->front()});

  flags.sidecar_cpus = std::to_string(server::kMaxCpus - 1);
  EXPECT_EQ(ErrorOf(flags),
            absl::StrCat("--sidecar_cpus: CPU ", server::kMaxCpus - 1,
                         " is not one this process may use (",
                         server::FormatCpuList(*allowed), ")"));
  flags.sidecar_cpus = "all";
  EXPECT_EQ(ErrorOf(flags),
            "--sidecar_cpus: want any, last or CPUs such as 1 or 0-1,3: "
            "\"all\" is not a CPU number");
}

TEST(ExperimentConfigTest, RequestsBelowTheMinimumNameTheFlag) {
  RawFlags flags;
  flags.requests = "99";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--requests: must be in [100"))
      << ErrorOf(flags);
  flags.requests = "100";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.requests = "many";
  EXPECT_EQ(ErrorOf(flags), "--requests: want an integer, got \"many\"");
}

TEST(ExperimentConfigTest, UnknownScenario) {
  RawFlags flags;
  flags.scenario = "storm";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--scenario: want one of seed"));
  EXPECT_TRUE(absl::StrContains(ErrorOf(flags), "chaos, overload"));
}

TEST(ExperimentConfigTest, OddWarmupIsRefused) {
  RawFlags flags;
  flags.warmup = "51";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--warmup: must be even"));
  flags.warmup = "0";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
}

TEST(ExperimentConfigTest, FlagsOfOtherScenariosAreRefused) {
  RawFlags flags;
  flags.rate = "100";
  EXPECT_EQ(ErrorOf(flags), "--rate: not used by --scenario=seed");
  flags = {};
  flags.scenario = "correlated";
  flags.duration = "1s";
  EXPECT_EQ(ErrorOf(flags), "--duration: not used by --scenario=correlated");
  flags = {};
  flags.scenario = "throughput";
  flags.sweep = true;
  EXPECT_EQ(ErrorOf(flags), "--sweep: not used by --scenario=throughput");
  flags = {};
  flags.scenario = "throughput";
  flags.plot_dir = "/tmp/plots";
  EXPECT_EQ(ErrorOf(flags), "--plot_dir: not used by --scenario=throughput");
  flags = {};
  flags.scenario = "open_loop";
  flags.requests = "500";
  EXPECT_EQ(ErrorOf(flags), "--requests: not used by --scenario=open_loop");
}

TEST(ExperimentConfigTest, OpenLoopSinglePoint) {
  RawFlags flags;
  flags.scenario = "open_loop";
  flags.rate = "250.5";
  flags.duration = "1s";
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->rates, std::vector<double>{250.5});
  EXPECT_EQ(config->duration, absl::Seconds(1));

  flags.rate = "";
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->rates, std::vector<double>{kDefaultRate});
}

TEST(ExperimentConfigTest, OpenLoopBadRates) {
  RawFlags flags;
  flags.scenario = "open_loop";
  flags.rate = "0";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--rate: must be in (0, "));
  flags.rate = "nan";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--rate: want a rate"));
  flags.rate = "0.5";
  flags.duration = "1s";
  EXPECT_TRUE(absl::StrContains(ErrorOf(flags), "schedules no read"));
}

TEST(ExperimentConfigTest, Sweep) {
  RawFlags flags;
  flags.scenario = "open_loop";
  flags.sweep = true;
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->rates.size(), std::size(kDefaultSweepRates));

  flags.sweep_rates = "100,200,400";
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->rates, (std::vector<double>{100, 200, 400}));

  flags.sweep_rates = "100,,400";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--sweep_rates: want a rate"));
  flags.sweep_rates = "100";
  flags.rate = "100";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--rate: a single rate"));
  flags = {};
  flags.scenario = "open_loop";
  flags.sweep_rates = "100";
  EXPECT_EQ(ErrorOf(flags), "--sweep_rates: needs --sweep");
}

TEST(ExperimentConfigTest, DurationAndConcurrency) {
  RawFlags flags;
  flags.scenario = "throughput";
  flags.duration = "2s";
  flags.concurrency = "8";
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->duration, absl::Seconds(2));
  EXPECT_EQ(config->concurrency, 8);

  flags.duration = "5";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--duration: want a duration"));
  flags.duration = "10ms";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--duration: must be in"));
  flags.duration = "1s";
  flags.concurrency = "0";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--concurrency: must be in"));
}

TEST(ExperimentConfigTest, CostCreepRuns) {
  RawFlags flags;
  flags.scenario = "cost";
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->creep_runs, 0);
  flags.creep_runs = "10";
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->creep_runs, 10);

  flags.creep_runs = "101";
  EXPECT_TRUE(
      absl::StartsWith(ErrorOf(flags), "--creep_runs: must be in [0, 100]"))
      << ErrorOf(flags);
  flags.creep_runs = "-1";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--creep_runs: must be in"));
  flags.scenario = "throughput";
  flags.creep_runs = "3";
  EXPECT_EQ(ErrorOf(flags), "--creep_runs: not used by --scenario=throughput");
}

TEST(ExperimentConfigTest, ChaosDefaults) {
  RawFlags flags;
  flags.scenario = "chaos";
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->scenario, Scenario::kChaos);
  EXPECT_EQ(config->duration, kDefaultChaosDuration);
  EXPECT_EQ(config->rates, std::vector<double>{kDefaultChaosRate});
  EXPECT_EQ(config->replica_down, absl::Milliseconds(200));
  EXPECT_EQ(config->replica_up, absl::Milliseconds(300));
  EXPECT_EQ(
      config->chaos_arms,
      (std::vector<ChaosArm>{ChaosArm::kDefaults, ChaosArm::kNoRetryBudget}));
}

TEST(ExperimentConfigTest, ChaosArms) {
  RawFlags flags;
  flags.scenario = "chaos";
  flags.chaos_arms = "no_retry_budget,defaults";
  flags.plot_dir = "plots";
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->chaos_arms, (std::vector<ChaosArm>{ChaosArm::kNoRetryBudget,
                                                       ChaosArm::kDefaults}));
  EXPECT_EQ(config->plot_dir, "plots");
  EXPECT_STREQ(ChaosArmName(ChaosArm::kNoRetryBudget), "no_retry_budget");
  flags.chaos_arms = "defaults";
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->chaos_arms, std::vector<ChaosArm>{ChaosArm::kDefaults});

  flags.chaos_arms = "defaults,shared";
  EXPECT_EQ(ErrorOf(flags),
            "--chaos_arms: want a comma-separated list of defaults and "
            "no_retry_budget, got \"defaults,shared\"");
  flags.chaos_arms = "defaults,";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--chaos_arms: want a"));
  flags.chaos_arms = "defaults,no_retry_budget,defaults";
  EXPECT_EQ(ErrorOf(flags),
            "--chaos_arms: defaults is listed twice in "
            "\"defaults,no_retry_budget,defaults\"");
}

TEST(ExperimentConfigTest, ChaosReplicaPhases) {
  RawFlags flags;
  flags.scenario = "chaos";
  flags.duration = "2s";
  flags.rate = "300";
  flags.replica_down = "10ms";
  flags.replica_up = "1999ms";
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->rates, std::vector<double>{300});
  EXPECT_EQ(config->replica_down, absl::Milliseconds(10));
  EXPECT_EQ(config->replica_up, absl::Milliseconds(1999));

  flags.replica_up = "2s";
  EXPECT_EQ(ErrorOf(flags),
            "--replica_up: must be shorter than --duration=2s, or replica A "
            "is never killed; got 2s");
  flags.replica_up = "9ms";
  EXPECT_TRUE(
      absl::StartsWith(ErrorOf(flags), "--replica_up: must be in [10ms"))
      << ErrorOf(flags);
  flags.replica_up = "300ms";
  flags.replica_down = "61s";
  EXPECT_TRUE(
      absl::StartsWith(ErrorOf(flags), "--replica_down: must be in [10ms, 1m]"))
      << ErrorOf(flags);
  flags.replica_down = "fast";
  EXPECT_EQ(
      ErrorOf(flags),
      "--replica_down: want a duration such as 250ms or 1s, got \"fast\"");
  flags = {};
  flags.scenario = "chaos";
  flags.replica_up = "20s";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags),
                               "--replica_up: must be shorter than "
                               "--duration=10s"));
}

TEST(ExperimentConfigTest, OverloadDefaults) {
  RawFlags flags;
  flags.scenario = "overload";
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->scenario, Scenario::kOverload);
  EXPECT_EQ(config->duration, absl::Seconds(5));
  EXPECT_EQ(config->rates, std::vector<double>{kDefaultOverloadRate});

  flags.rate = "1000000";
  flags.duration = "20s";
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  flags.duration = "21s";
  EXPECT_TRUE(absl::StrContains(ErrorOf(flags), "schedules more than"))
      << ErrorOf(flags);
  flags.rate = "1000001";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--rate: must be in (0, "));
}

TEST(ExperimentConfigTest, ChaosAndOverloadFlagsElsewhereAreRefused) {
  RawFlags flags;
  flags.scenario = "overload";
  flags.replica_down = "100ms";
  EXPECT_EQ(ErrorOf(flags), "--replica_down: not used by --scenario=overload");
  flags = {};
  flags.scenario = "open_loop";
  flags.replica_up = "100ms";
  EXPECT_EQ(ErrorOf(flags), "--replica_up: not used by --scenario=open_loop");
  flags = {};
  flags.scenario = "overload";
  flags.plot_dir = "plots";
  EXPECT_EQ(ErrorOf(flags), "--plot_dir: not used by --scenario=overload");
  flags = {};
  flags.scenario = "overload";
  flags.chaos_arms = "defaults";
  EXPECT_EQ(ErrorOf(flags), "--chaos_arms: not used by --scenario=overload");
  for (const char* scenario : {"chaos", "overload"}) {
    flags = {};
    flags.scenario = scenario;
    flags.sweep = true;
    EXPECT_EQ(ErrorOf(flags),
              std::string("--sweep: not used by --scenario=") + scenario);
    flags = {};
    flags.scenario = scenario;
    flags.concurrency = "8";
    EXPECT_EQ(ErrorOf(flags),
              std::string("--concurrency: not used by --scenario=") + scenario);
  }
}

}  // namespace
}  // namespace tailgate::experiment
