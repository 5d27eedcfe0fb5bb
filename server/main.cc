// tailgate: the hedged-read sidecar. main parses the settings and runs a
// Sidecar (server/sidecar/sidecar.h), which owns every part.
//
// Settings: flags and the --config file; a bad value prints one line
// naming the flag, or the file, line and field, and exits 2.
//
// Reload: with --config, SIGHUP and a change of the file (its directory is
// watched) re-read it and apply its upstreams (server/config/config_reload.h).
//
// Shutdown: on SIGTERM or SIGINT the sidecar drains, everything stops and
// the process exits 0. A second signal exits at once with 128 + signal
// (143 / 130). Failing to start (pinning to --cpus, the engine or a
// listener) logs event=fatal naming the part and exits 1.

#include <stdio.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "hedge/transport/engine.h"
#include "server/config/config_file.h"
#include "server/config/server_config.h"
#include "server/observability/library_logs.h"
#include "server/observability/log.h"
#include "server/process/termination_signals.h"
#include "server/sidecar/sidecar.h"

namespace tailgate::server {
namespace {

int Run(const ServerConfig& config, const RawFlags& command_line,
        const OnCommandLine& on_command_line) {
  Logger log(config.log_format);
  // Before the first gRPC object: nothing a client sends reaches the log
  // unescaped, and the libraries' lines are rate-limited.
  RouteLibraryLogs(log);
  StartFailure failure;
  std::unique_ptr<Sidecar> sidecar =
      Sidecar::Start(config, command_line, on_command_line, log, failure);
  if (sidecar == nullptr) {
    log.Error("fatal",
              {{"what", failure.what}, {"error", failure.status.message()}});
    return 1;
  }
  sidecar->ServeUntilSignal();
  return 0;  // ~Sidecar stops every part, in reverse start order
}

}  // namespace
}  // namespace tailgate::server

int main(int argc, char** argv) {
  // Before any thread exists, so that every thread inherits the mask.
  tailgate::server::BlockTerminationSignals();
  // Debian's abseil is built with mutex deadlock detection on, which keeps
  // a lock graph on every contended absl::Mutex (gRPC's mutexes among
  // them): measurable CPU per read, and no use in production.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::SetProgramUsageMessage(
      "Hedged HTTP reads as a gRPC sidecar.\n"
      "  tailgate --backends=http://10.0.0.7:8080,http://10.0.0.8:8080\n"
      "  tailgate --config=/etc/tailgate/sidecar.textproto\n"
      "With --config, SIGHUP or a change of the file reloads its upstreams "
      "(replicas and their policy) without dropping a read; listeners and "
      "global limits need a restart.");
  // --help lists the flags, which are defined beside their parser.
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server/config/server_config.cc");
  };
  absl::SetFlagsUsageConfig(usage);
  // Which flags the command line names, before absl consumes argv.
  const tailgate::server::OnCommandLine on_command_line =
      tailgate::server::FlagsNamedIn(argc, argv);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 1) {
    fprintf(stderr, "unexpected argument \"%s\" (every setting is a --flag)\n",
            args[1]);
    return 2;
  }
  // The --config file under the flags given on the command line.
  const tailgate::server::RawFlags command_line =
      tailgate::server::RawFlagsFromCommandLine();
  absl::StatusOr<tailgate::server::RawFlags> flags =
      tailgate::server::ApplyConfigFile(command_line, on_command_line);
  if (!flags.ok()) {
    fprintf(stderr, "%s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<tailgate::server::ServerConfig> config =
      tailgate::server::ConfigFromRawFlags(*flags);
  if (!config.ok()) {
    fprintf(stderr, "%s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  // What only the engine knows (whether this libcurl can speak h2c), as a
  // bad value like any other, before anything starts or logs.
  if (absl::Status engine =
          tailgate::hedge::Engine::CheckConfig(config->engine);
      !engine.ok()) {
    fprintf(stderr, "%s\n",
            std::string(
                tailgate::server::ForSourceOfField(engine, *flags).message())
                .c_str());
    return 2;
  }
  return tailgate::server::Run(*config, command_line, on_command_line);
}
