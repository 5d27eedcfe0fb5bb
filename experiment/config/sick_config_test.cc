#include "experiment/config/sick_config.h"

#include <string>
#include <vector>

#include "experiment/config/experiment_config.h"
#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

std::string ErrorOf(const RawSickFlags& flags) {
  absl::StatusOr<SickConfig> config = ParseSickConfig(flags);
  EXPECT_FALSE(config.ok());
  return config.ok() ? "" : std::string(config.status().message());
}

std::string ErrorOf(const RawFlags& flags) {
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  EXPECT_FALSE(config.ok());
  return config.ok() ? "" : std::string(config.status().message());
}

TEST(SickConfigTest, DefaultsAreTheWholeMatrix) {
  absl::StatusOr<SickConfig> config = ParseSickConfig({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->kinds,
            (std::vector<SickKind>{SickKind::kHang, SickKind::kGray,
                                   SickKind::kSlow, SickKind::kHeal}));
  EXPECT_EQ(config->replicas, (std::vector<int>{2, 3}));
  EXPECT_EQ(config->rates, (std::vector<double>{2, 20}));
  EXPECT_EQ(config->seconds, absl::Seconds(30));
}

TEST(SickConfigTest, SubsetsInTheOrderGiven) {
  RawSickFlags flags;
  flags.kinds = "heal,gray";
  flags.replicas = "3";
  flags.rates = "20,0.5";
  flags.seconds = "12";
  absl::StatusOr<SickConfig> config = ParseSickConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->kinds,
            (std::vector<SickKind>{SickKind::kHeal, SickKind::kGray}));
  EXPECT_EQ(config->replicas, (std::vector<int>{3}));
  EXPECT_EQ(config->rates, (std::vector<double>{20, 0.5}));
  EXPECT_EQ(config->seconds, absl::Seconds(12));
}

TEST(SickConfigTest, BadValuesNameTheirFlag) {
  RawSickFlags flags;
  flags.kinds = "hang,flaky";
  EXPECT_EQ(ErrorOf(flags),
            "--sick_kinds: want a comma-separated list of hang, gray, slow "
            "and heal, got \"flaky\"");
  flags = {};
  flags.kinds = "gray,gray";
  EXPECT_EQ(ErrorOf(flags),
            "--sick_kinds: gray is listed twice in "
            "\"gray,gray\"");
  flags = {};
  flags.replicas = "1";
  EXPECT_EQ(ErrorOf(flags),
            "--sick_replicas: must be in [2, 8] (one sick replica and at "
            "least one healthy), got 1");
  flags = {};
  flags.rates = "2,0";
  EXPECT_EQ(ErrorOf(flags),
            "--sick_rates: must be in (0, 1000000] req/s, "
            "got 0");
  flags = {};
  flags.seconds = "0";
  EXPECT_EQ(ErrorOf(flags), "--sick_seconds: must be in [1, 3600], got 0");
  flags = {};
  flags.rates = "0.5";
  flags.seconds = "1";
  EXPECT_EQ(ErrorOf(flags),
            "--sick_rates: 0.5 reads/s for --sick_seconds=1 schedules no "
            "read");
}

TEST(SickConfigTest, TheScenarioTakesItsFlagsAndRefusesTheSidecarTuning) {
  RawFlags flags;
  flags.scenario = "sick";
  flags.sick.kinds = "gray";
  flags.sick.seconds = "3";
  flags.peer_gateway = "/bin/true";
  flags.plot_dir = "/tmp/plots";
  absl::StatusOr<ExperimentConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->scenario, Scenario::kSick);
  EXPECT_EQ(config->sick.kinds, std::vector<SickKind>{SickKind::kGray});
  EXPECT_EQ(config->sick.seconds, absl::Seconds(3));
  EXPECT_EQ(config->peer_gateway, "/bin/true");
  EXPECT_TRUE(config->sidecar_cpus.empty());

  flags.sidecar_cpus = "1";
  EXPECT_EQ(ErrorOf(flags), "--sidecar_cpus: not used by --scenario=sick");
  flags.sidecar_cpus.clear();
  flags.warmup = "10";
  EXPECT_EQ(ErrorOf(flags), "--warmup: not used by --scenario=sick");
  flags.warmup.clear();
  flags.duration = "5s";
  EXPECT_EQ(ErrorOf(flags), "--duration: not used by --scenario=sick");
  flags.duration.clear();
  flags.rate = "5";
  EXPECT_EQ(ErrorOf(flags), "--rate: not used by --scenario=sick");
}

TEST(SickConfigTest, OtherScenariosRefuseTheSickFlags) {
  RawFlags flags;
  flags.scenario = "chaos";
  flags.sick.rates = "2";
  EXPECT_EQ(ErrorOf(flags), "--sick_rates: not used by --scenario=chaos");
}

}  // namespace
}  // namespace tailgate::experiment
