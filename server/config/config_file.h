// The --config file: protobuf text format, schema tailgate.v1.SidecarConfig
// (proto/tailgate/v1/config.proto), folded into the command line's
// RawFlags before ConfigFromRawFlags checks every value. LoadConfig
// (config_load.h) reads the file and runs both, at start-up and on reload.
//
// Example:
//   absl::StatusOr<RawFlags> merged =
//       ApplyConfigText(path, text, command_line, FlagsNamedIn(argc, argv));
//   if (!merged.ok()) { print merged.status().message(); exit 2; }
//   absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(*merged);
//
// Numbers are taken as the file typed them (RawValue), never written out
// as text for the flags' parser.
//
// Precedence: a global setting (a field named like its flag) given on the
// command line wins over the file's; the file's wins over the flag's
// default. An upstream's policy fields win over the flags of the same
// names, which only fill in what the upstream leaves out; --backends on
// the command line replaces the default set's replicas.
//
// Errors are INVALID_ARGUMENT with one line that names the file, the line
// and column (1-based) and the field or problem:
//   sidecar.textproto:4:17: upstreams.a.hedge_fraction: want a number, got ""
//   sidecar.textproto:9:8: Message type "tailgate.v1.UpstreamConfig" has no
//   field named "delay".
// Values are checked later, by ConfigFromRawFlags, whose errors name the
// same places (RawFlags::file_locations).
//
// Thread safety: pure functions.

#ifndef TAILGATE_SERVER_CONFIG_CONFIG_FILE_H_
#define TAILGATE_SERVER_CONFIG_CONFIG_FILE_H_

#include <functional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/config/server_config.h"

namespace tailgate::server {

// Whether the flag called `name` was given on the command line.
using OnCommandLine = std::function<bool(absl::string_view name)>;

// `flags` with the text of a config file (named `path` in errors) folded
// in.
absl::StatusOr<RawFlags> ApplyConfigText(absl::string_view path,
                                         absl::string_view text, RawFlags flags,
                                         const OnCommandLine& on_command_line);

// The flags `argv` names ("--name", "--name=value", "-name", "--noname"
// for a boolean; up to a "--"), read before absl parses them. Flags given
// through --flagfile or --fromenv count as not on the command line.
OnCommandLine FlagsNamedIn(int argc, char** argv);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_CONFIG_FILE_H_
