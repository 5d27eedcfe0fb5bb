#include "experiment/config/fanout_config.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

TEST(FanoutConfigTest, DefaultsRunEveryPartAtBothSizes) {
  absl::StatusOr<FanoutConfig> config = ParseFanoutConfig({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sizes, (std::vector<int>{100, 1000}));
  EXPECT_EQ(config->batches, 2000);
  EXPECT_TRUE(config->Runs(FanoutPart::kBatches));
  EXPECT_TRUE(config->Runs(FanoutPart::kPerKeyCost));
  EXPECT_TRUE(config->Runs(FanoutPart::kHotKeys));
  EXPECT_EQ(config->coalesce, FanoutCoalesce::kAuto);
}

TEST(FanoutConfigTest, GivenValuesAreTaken) {
  RawFanoutFlags flags;
  flags.sizes = "1000,10";
  flags.batches = "20";
  flags.parts = "hot_keys,batches";
  flags.coalesce = "false";
  absl::StatusOr<FanoutConfig> config = ParseFanoutConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sizes, (std::vector<int>{10, 1000}));
  EXPECT_EQ(config->batches, 20);
  EXPECT_EQ(config->parts, (std::vector<FanoutPart>{FanoutPart::kBatches,
                                                    FanoutPart::kHotKeys}));
  EXPECT_EQ(config->coalesce, FanoutCoalesce::kOff);
}

TEST(FanoutConfigTest, BadValuesNameTheirFlag) {
  for (const auto& [flags, named] :
       std::vector<std::pair<RawFanoutFlags, const char*>>{
           {{"1001", "", "", ""}, "--fanout_sizes:"},
           {{"100,100", "", "", ""}, "--fanout_sizes:"},
           {{"", "4", "", ""}, "--fanout_batches:"},
           {{"", "", "batches,everything", ""}, "--fanout_parts:"},
           {{"", "", "batches,batches", ""}, "--fanout_parts:"},
           {{"", "", "", "yes"}, "--fanout_coalesce:"}}) {
    absl::StatusOr<FanoutConfig> config = ParseFanoutConfig(flags);
    ASSERT_FALSE(config.ok()) << named;
    EXPECT_TRUE(absl::StartsWith(config.status().message(), named))
        << config.status();
  }
}

}  // namespace
}  // namespace tailgate::experiment
