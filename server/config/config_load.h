// LoadConfig: the one path from the command line and the --config file to
// a checked ServerConfig, taken at start-up (main) and by every reload
// (ConfigReloader), so both read, merge and check the settings the same
// way and word a bad value the same one line.
//
// Steps: the command line's flags (RawFlags, as given) -> the config file
// folded in under them (ApplyConfigText: a global the command line gives
// wins; numbers as the file typed them) -> ConfigFromRawFlags (every
// value, named by its flag or its place in the file) -> what only the
// engine knows (Engine::CheckConfig, e.g. whether libcurl speaks h2c).
//
// Example (main):
//   OnCommandLine given = FlagsNamedIn(argc, argv);  // before absl parses
//   absl::ParseCommandLine(argc, argv);
//   absl::StatusOr<LoadedConfig> loaded = LoadConfigAtStartUp(given);
//   if (!loaded.ok()) { print loaded.status().message(); exit 2; }
//
// Thread safety: pure functions apart from reading the file (and, for
// LoadConfigAtStartUp, the process's flags).

#ifndef TAILGATE_SERVER_CONFIG_CONFIG_LOAD_H_
#define TAILGATE_SERVER_CONFIG_CONFIG_LOAD_H_

#include <string>

#include "absl/status/statusor.h"
#include "server/config/config_file.h"
#include "server/config/server_config.h"

namespace tailgate::server {

struct LoadedConfig {
  // The flags as given (command_line.config names the file, if any), and
  // which of them the command line named: what a reload starts from.
  RawFlags command_line;
  OnCommandLine on_command_line;
  // The command line with the file folded in; its file_locations name
  // where the file set each value (for ForSourceOfField).
  RawFlags merged;
  ServerConfig config;
  // The config file's bytes as read ("" without --config).
  std::string file_text;
};

// Reads the file command_line.config names (none when empty) and loads
// it under `command_line`. INVALID_ARGUMENT with one line for an
// unreadable file ("--config: cannot read \"PATH\""), a bad file or a bad
// value.
absl::StatusOr<LoadedConfig> LoadConfig(RawFlags command_line,
                                        OnCommandLine on_command_line);

// The same with the file's bytes already read (`file_text`, the file
// command_line.config names).
absl::StatusOr<LoadedConfig> LoadConfigText(RawFlags command_line,
                                            OnCommandLine on_command_line,
                                            std::string file_text);

// LoadConfig of the process's flags (call after absl::ParseCommandLine);
// `on_command_line` from FlagsNamedIn, taken before absl consumed argv.
absl::StatusOr<LoadedConfig> LoadConfigAtStartUp(OnCommandLine on_command_line);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_CONFIG_LOAD_H_
