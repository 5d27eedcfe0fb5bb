// The tailgate_read command line, parsed in one pure step.
//
//   tailgate_read [--target=ADDR] [--head] [-H 'Name: value']...
//                 [--upstream=NAME] [--deadline=DUR] [--no_hedge]
//                 [--hedge_delay=DUR] [-v] PATH
//   tailgate_read [read options] [--max_in_flight=N] [--body] many [PATH]...
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
//   line = ParseCommandLine({"many", "/a", "/b"});
//   // line->command == Command::kMany, line->paths == {"/a", "/b"}
//
// Thread safety: pure functions.

#ifndef TAILGATE_CLIENT_COMMAND_LINE_H_
#define TAILGATE_CLIENT_COMMAND_LINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/client.h"

namespace tailgate::cli {

enum class Command { kRead, kMany, kStats, kMetrics, kHelp };

struct CommandLine {
  Command command = Command::kRead;
  std::string target = "127.0.0.1:8080";  // HedgedRead (the sidecar's --listen)
  std::string admin = "127.0.0.1:9090";   // Admin (the sidecar's --admin)
  absl::Duration deadline = absl::Seconds(5);
  bool verbose = false;
  bool json = false;
  // kRead: the descriptor; its deadline is left zero (use `deadline`).
  // kMany: every read's descriptor but its path.
  ReadRequest read;
  // kMany: the paths after "many", sent as given (the sidecar fails the
  // item of a bad one); none: read them from stdin (PathsFromText).
  std::vector<std::string> paths;
  // kMany: how many reads the sidecar runs at once; 0: its admission's
  // limit.
  uint32_t max_in_flight = 0;
  // kMany: each item's line ends with its body, quoted.
  bool body = false;
};

// Parses the arguments after the program name. INVALID_ARGUMENT with a
// one-line message for bad input ("--deadline: not a duration: 'soon'
// (use 250ms, 2s, ...)"). -h or --help anywhere before "--" gives kHelp.
absl::StatusOr<CommandLine> ParseCommandLine(
    const std::vector<std::string>& args);

// The paths of `text`, one a line: a trailing "\r" is dropped and blank
// lines are skipped; anything else is sent as given.
std::vector<std::string> PathsFromText(absl::string_view text);

// The --help text, exit codes included.
std::string UsageText();

}  // namespace tailgate::cli

#endif  // TAILGATE_CLIENT_COMMAND_LINE_H_
