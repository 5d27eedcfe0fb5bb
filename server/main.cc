// tailgate: the hedged-read sidecar. main parses the settings and runs a
// Sidecar (server/sidecar/sidecar.h), which owns every part.
//
// Settings: flags and the --config file, each declared once in the .proto
// files (server/config/schema); a bad value prints one line naming the
// flag, or the file, line and field, and exits 2. --help prints every
// flag as declared and exits 0; --version prints the version and commit
// (server/version) and exits 0.
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
#include <utility>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "server/config/command_line_flags.h"
#include "server/config/config_load.h"
#include "server/config/schema/settings_docs.h"
#include "server/observability/library_logs.h"
#include "server/observability/log.h"
#include "server/process/termination_signals.h"
#include "server/sidecar/sidecar.h"
#include "server/version/build_info.h"
#include "server/version/stamped_build_info.h"

namespace tailgate::server {
namespace {

constexpr char kUsage[] =
    "Hedged HTTP reads as a gRPC sidecar.\n"
    "  tailgate --backends=http://10.0.0.7:8080,http://10.0.0.8:8080\n"
    "  tailgate --config=/etc/tailgate/sidecar.textproto\n"
    "With --config, SIGHUP or a change of the file reloads its upstreams "
    "(replicas and their policy) without dropping a read; listeners and "
    "global limits need a restart.";

// Whether argv asks for --help (or -help), before a "--".
bool WantsHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") return false;
    if (arg == "--help" || arg == "-help") return true;
  }
  return false;
}

int Run(const LoadedConfig& loaded, const BuildInfo& build) {
  Logger log(loaded.config.log_format);
  // Before the first gRPC object: nothing a client sends reaches the log
  // unescaped, and the libraries' lines are rate-limited.
  RouteLibraryLogs(log);
  StartFailure failure;
  std::unique_ptr<Sidecar> sidecar =
      Sidecar::Start(loaded, build, log, failure);
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
  // --help: every flag as the settings schema declares it, on stdout.
  if (tailgate::server::WantsHelp(argc, argv)) {
    const std::string help =
        tailgate::server::HelpText(tailgate::server::kUsage);
    fwrite(help.data(), 1, help.size(), stdout);
    return 0;
  }
  // Before any thread exists, so that every thread inherits the mask.
  tailgate::server::BlockTerminationSignals();
  // Debian's abseil is built with mutex deadlock detection on, which keeps
  // a lock graph on every contended absl::Mutex (gRPC's mutexes among
  // them): measurable CPU per read, and no use in production.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::SetProgramUsageMessage(tailgate::server::kUsage);
  // absl's --helpfull and --helpshort list the flags, which are defined
  // from the schema in one file.
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, tailgate::server::kCommandLineFlagsFile);
  };
  // --version: abseil prints this and exits 0.
  usage.version_string = [] {
    return tailgate::server::VersionText(tailgate::server::StampedBuildInfo());
  };
  absl::SetFlagsUsageConfig(usage);
  // Which flags the command line names, before absl consumes argv.
  tailgate::server::OnCommandLine on_command_line =
      tailgate::server::FlagsNamedIn(argc, argv);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 1) {
    fprintf(stderr, "unexpected argument \"%s\" (every setting is a --flag)\n",
            args[1]);
    return 2;
  }
  // The command line, the --config file under it, every value checked:
  // the path every reload takes too.
  absl::StatusOr<tailgate::server::LoadedConfig> loaded =
      tailgate::server::LoadConfigAtStartUp(std::move(on_command_line));
  if (!loaded.ok()) {
    fprintf(stderr, "%s\n", std::string(loaded.status().message()).c_str());
    return 2;
  }
  return tailgate::server::Run(*loaded, tailgate::server::StampedBuildInfo());
}
