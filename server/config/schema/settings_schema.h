// The settings schema: every setting of the sidecar, as declared once by
// the (tailgate.v1.setting) option (proto/tailgate/v1/setting_options.proto)
// on its field of the config file (tailgate.v1.SidecarConfig,
// tailgate.v1.UpstreamConfig) or of the command line
// (tailgate.v1.CommandLine). Read from the generated descriptors, so the
// flags' defaults and help (command_line_flags.cc), --help, range checks,
// the reload's needs-restart set and the flag table of
// docs/CONFIGURATION.md all follow the .proto files.
//
// Example:
//   const SettingDecl* timeout = SettingOfFlag("timeout");
//   timeout->setting->default_value();  // "1s"
//
// Thread safety: the schema is built once, on first use, and constant
// after; every function is safe from any thread.

#ifndef TAILGATE_SERVER_CONFIG_SCHEMA_SETTINGS_SCHEMA_H_
#define TAILGATE_SERVER_CONFIG_SCHEMA_SETTINGS_SCHEMA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "tailgate/v1/setting_options.pb.h"

namespace tailgate::server {

// One declared field: a setting, with or without a flag.
struct SettingDecl {
  const google::protobuf::FieldDescriptor* field = nullptr;
  const v1::Setting* setting = nullptr;  // the field's option
  // Its name in the config file: "timeout", "upstreams.hedge_delay"; ""
  // for a command-line-only setting.
  std::string file_field;
};

// Every declared field, in order: tailgate.v1.CommandLine's,
// SidecarConfig's, UpstreamConfig's, each in declaration order.
const std::vector<SettingDecl>& Settings();

// The setting whose flag is `flag` (without "--"); nullptr if none.
const SettingDecl* SettingOfFlag(absl::string_view flag);

// The declared default of `flag` ("" when unset). `flag` must be declared
// (a programming error otherwise: aborts).
std::string SettingDefault(absl::string_view flag);

// The flag's help as a terminal shows it: the help, its range or allowed
// values, what unset means; without Markdown backticks.
std::string SettingHelp(absl::string_view flag);

// The inclusive bounds the schema declares for `flag` (min, max); the
// int64 limits where it declares none.
struct SettingBounds {
  int64_t min;
  int64_t max;
};
SettingBounds BoundsOf(absl::string_view flag);

// Whether `value` is one of the allowed values of `flag` (any value when
// it declares none), and the allowed values for a message: "loop or grpc".
bool Allows(absl::string_view flag, absl::string_view value);
std::string AllowedText(absl::string_view flag);

// The SidecarConfig fields a reload cannot apply (reloadable: false), by
// name, in declaration order.
std::vector<std::string> NeedsRestartFields();

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_SCHEMA_SETTINGS_SCHEMA_H_
