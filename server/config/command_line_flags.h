// The sidecar's command-line flags: one absl flag per declared setting
// (schema/settings_schema.h), each defined in command_line_flags.cc with
// its default and help read from the schema, all taken as text and
// checked by ConfigFromRawFlags.
//
// Example (main):
//   absl::ParseCommandLine(argc, argv);
//   RawFlags flags = RawFlagsFromCommandLine();
//
// Thread safety: call after absl::ParseCommandLine; reads the process's
// flags.

#ifndef TAILGATE_SERVER_CONFIG_COMMAND_LINE_FLAGS_H_
#define TAILGATE_SERVER_CONFIG_COMMAND_LINE_FLAGS_H_

#include "absl/status/statusor.h"
#include "server/config/server_config.h"

namespace tailgate::server {

// The process's --flags, as RawFlags.
RawFlags RawFlagsFromCommandLine();

inline absl::StatusOr<ServerConfig> ConfigFromFlags() {
  return ConfigFromRawFlags(RawFlagsFromCommandLine());
}

// The file that defines the flags (for absl's --helpfull filter).
inline constexpr char kCommandLineFlagsFile[] =
    "server/config/command_line_flags.cc";

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_COMMAND_LINE_FLAGS_H_
