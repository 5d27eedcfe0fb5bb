// The tailgate_read command line, parsed in one pure step.
//
//   tailgate_read [--target=ADDR] [--head] [-H 'Name: value']...
//                 [--upstream=NAME] [--deadline=DUR] [--no_hedge]
//                 [--hedge_delay=DUR] [-v] PATH
//   tailgate_read [--admin=ADDR] [--deadline=DUR] stats [--json]
//   tailgate_read [--admin=ADDR] [--deadline=DUR] metrics
//
// Parsed by hand rather than by absl flags: curl-like short options (-H, -v)
// and a usage error that is one line and exit code 2 (absl exits with 1 and
// its own text on an unknown flag).
//
// Example:
//   absl::StatusOr<CommandLine> line = ParseCommandLine({"-v", "/x"});
//   // line->command == Command::kRead, line->verbose, line->read.path == "/x"
//
// Thread safety: pure functions.

#ifndef TAILGATE_CLIENT_COMMAND_LINE_H_
#define TAILGATE_CLIENT_COMMAND_LINE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client.h"

namespace tailgate::cli {

enum class Command { kRead, kStats, kMetrics, kHelp };

struct CommandLine {
  Command command = Command::kRead;
  std::string target = "127.0.0.1:8080";  // HedgedRead (the sidecar's --listen)
  std::string admin = "127.0.0.1:9090";   // Admin (the sidecar's --admin)
  absl::Duration deadline = absl::Seconds(5);
  bool verbose = false;
  bool json = false;
  // kRead: the descriptor; its deadline is left zero (use `deadline`).
  ReadRequest read;
};

// Parses the arguments after the program name. INVALID_ARGUMENT with a
// one-line message for bad input ("--deadline: not a duration: 'soon'
// (use 250ms, 2s, ...)"). -h or --help anywhere before "--" gives kHelp.
absl::StatusOr<CommandLine> ParseCommandLine(
    const std::vector<std::string>& args);

// The --help text, exit codes included.
std::string UsageText();

}  // namespace tailgate::cli

#endif  // TAILGATE_CLIENT_COMMAND_LINE_H_
