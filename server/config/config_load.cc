#include "server/config/config_load.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hedge/transport/engine.h"
#include "server/config/command_line_flags.h"

namespace tailgate::server {

absl::StatusOr<LoadedConfig> LoadConfigText(RawFlags command_line,
                                            OnCommandLine on_command_line,
                                            std::string file_text) {
  LoadedConfig loaded;
  if (command_line.config.empty()) {
    loaded.merged = command_line;
  } else {
    absl::StatusOr<RawFlags> merged = ApplyConfigText(
        command_line.config, file_text, command_line, on_command_line);
    if (!merged.ok()) return merged.status();
    loaded.merged = *std::move(merged);
  }
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(loaded.merged);
  if (!config.ok()) return config.status();
  // What only the engine knows (whether this libcurl can speak h2c), as a
  // bad value like any other.
  if (absl::Status s = hedge::Engine::CheckConfig(config->engine); !s.ok()) {
    return ForSourceOfField(s, loaded.merged);
  }
  loaded.config = *std::move(config);
  loaded.command_line = std::move(command_line);
  loaded.on_command_line = std::move(on_command_line);
  loaded.file_text = std::move(file_text);
  return loaded;
}

absl::StatusOr<LoadedConfig> LoadConfig(RawFlags command_line,
                                        OnCommandLine on_command_line) {
  std::string text;
  if (!command_line.config.empty()) {
    std::ifstream in(command_line.config, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    if (!in.is_open() || in.bad()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--config: cannot read \"", command_line.config, "\""));
    }
    text = bytes.str();
  }
  return LoadConfigText(std::move(command_line), std::move(on_command_line),
                        std::move(text));
}

absl::StatusOr<LoadedConfig> LoadConfigAtStartUp(
    OnCommandLine on_command_line) {
  return LoadConfig(RawFlagsFromCommandLine(), std::move(on_command_line));
}

}  // namespace tailgate::server
