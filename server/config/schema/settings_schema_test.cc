// The schema read from the .proto files, and the flags defined from it:
// every declared flag is an absl flag with the declared default and help,
// and no flag is defined without a declaration.

#include "server/config/schema/settings_schema.h"

#include <string>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "server/config/command_line_flags.h"
#include "server/config/schema/settings_docs.h"
#include "server/config/server_config.h"

namespace tailgate::server {
namespace {

TEST(SettingsSchemaTest, EveryDeclaredFlagIsDefinedWithItsDefaultAndHelp) {
  int flags = 0;
  for (const SettingDecl& decl : Settings()) {
    const std::string& name = decl.setting->flag();
    if (name.empty()) continue;
    ++flags;
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    ASSERT_NE(flag, nullptr) << "--" << name << " is declared, not defined";
    EXPECT_TRUE(absl::EndsWith(flag->Filename(), kCommandLineFlagsFile))
        << name;
    const std::string want = name == "backend_http2"
                                 ? std::string("false")
                                 : decl.setting->default_value();
    EXPECT_EQ(flag->DefaultValue(), want) << name;
    EXPECT_EQ(flag->Help(), SettingHelp(name)) << name;
    EXPECT_FALSE(decl.setting->help().empty()) << name;
  }
  EXPECT_EQ(flags, 53);
}

TEST(SettingsSchemaTest, NoFlagIsDefinedWithoutADeclaration) {
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!absl::EndsWith(flag->Filename(), kCommandLineFlagsFile)) continue;
    EXPECT_NE(SettingOfFlag(name), nullptr) << "--" << name;
  }
}

TEST(SettingsSchemaTest, FieldsAreNamedAsInTheFile) {
  EXPECT_EQ(SettingOfFlag("timeout")->file_field, "timeout");
  EXPECT_EQ(SettingOfFlag("hedge_delay")->file_field, "upstreams.hedge_delay");
  EXPECT_EQ(SettingOfFlag("backend_http2")->file_field, "upstreams.http2");
  EXPECT_EQ(SettingOfFlag("log_format")->file_field, "");
  EXPECT_EQ(SettingOfFlag("no_such_flag"), nullptr);
}

TEST(SettingsSchemaTest, RangesAndAllowedValues) {
  EXPECT_EQ(BoundsOf("max_connections").min, 1);
  EXPECT_EQ(BoundsOf("max_connections").max, 1000000);
  EXPECT_EQ(BoundsOf("max_buffered_bytes").min, int64_t{1} << 20);
  EXPECT_TRUE(Allows("listen_front", "grpc"));
  EXPECT_FALSE(Allows("listen_front", "GRPC"));
  EXPECT_TRUE(Allows("timeout", "anything"));  // declares no allowed values
  EXPECT_EQ(AllowedText("log_format"), "logfmt or json");
}

TEST(SettingsSchemaTest, GlobalsNeedARestartButUpstreamsAndTenantShareDiffer) {
  const std::vector<std::string> fields = NeedsRestartFields();
  const auto has = [&fields](const std::string& name) {
    return std::find(fields.begin(), fields.end(), name) != fields.end();
  };
  EXPECT_TRUE(has("listen"));
  EXPECT_TRUE(has("max_requests"));
  // Admission's per-tenant cap is sized at start-up.
  EXPECT_TRUE(has("tenant_share"));
  EXPECT_FALSE(has("upstreams"));
}

TEST(SettingsSchemaTest, RawFlagsDefaultsAreTheDeclaredOnes) {
  const RawFlags flags;
  EXPECT_EQ(flags.listen, "127.0.0.1:8080");
  EXPECT_EQ(flags.hedge_delay, "25ms");
  EXPECT_EQ(flags.max_requests, RawValue("128"));
  EXPECT_TRUE(flags.max_streams_per_connection.empty());
  EXPECT_FALSE(flags.backend_http2);
  EXPECT_EQ(flags.health.probe_method, "GET");
}

TEST(SettingsSchemaTest, HelpListsEveryFlag) {
  const std::string help = HelpText("usage line");
  EXPECT_TRUE(absl::StartsWith(help, "usage line\n"));
  for (const SettingDecl& decl : Settings()) {
    if (decl.setting->flag().empty()) continue;
    EXPECT_TRUE(absl::StrContains(help, "\n  --" + decl.setting->flag() + " ("))
        << decl.setting->flag();
  }
  EXPECT_TRUE(absl::StrContains(
      help,
      "--tenant_share (default: \"1\"; file: tenant_share; reload: "
      "restart)"));
}

}  // namespace
}  // namespace tailgate::server
