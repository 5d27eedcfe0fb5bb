#include "client/command_line.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "client/exit_codes.h"
#include "flags/flag_values.h"

namespace tailgate::cli {
namespace {

// Which commands an option applies to: kRead options to single reads and
// to `many`.
enum class Scope { kAny, kRead, kMany, kStats };

struct Option {
  absl::string_view long_name;  // without "--", underscores
  char short_name;              // 0: none
  bool takes_value;
  Scope scope;
  // Stores `value` in `line`; an error message without the option's name.
  absl::Status (*apply)(absl::string_view value, CommandLine& line);
};

absl::Status NonEmpty(absl::string_view value, std::string& out) {
  if (value.empty()) return absl::InvalidArgumentError("must not be empty");
  out = std::string(value);
  return absl::OkStatus();
}

absl::Status PositiveDuration(absl::string_view value, bool allow_infinite,
                              absl::Duration& out) {
  absl::StatusOr<absl::Duration> duration =
      flags::ParseDuration(value, allow_infinite ? flags::Infinite::kAllow
                                                 : flags::Infinite::kReject);
  if (!duration.ok()) return duration.status();
  if (*duration <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("must be positive, got ", value));
  }
  out = *duration;
  return absl::OkStatus();
}

absl::Status AddHeader(absl::string_view value, CommandLine& line) {
  const size_t colon = value.find(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected 'Name: value', got '", value, "'"));
  }
  const absl::string_view name = value.substr(0, colon);
  if (name.empty() || std::any_of(name.begin(), name.end(), [](char c) {
        return absl::ascii_isspace(static_cast<unsigned char>(c));
      })) {
    return absl::InvalidArgumentError(absl::StrCat(
        "header name must be non-empty without spaces, got '", value, "'"));
  }
  line.read.headers.push_back(
      {std::string(name),
       std::string(absl::StripAsciiWhitespace(value.substr(colon + 1)))});
  return absl::OkStatus();
}

constexpr Option kOptions[] = {
    {"target", 0, true, Scope::kAny,
     [](absl::string_view v, CommandLine& l) { return NonEmpty(v, l.target); }},
    {"admin", 0, true, Scope::kAny,
     [](absl::string_view v, CommandLine& l) { return NonEmpty(v, l.admin); }},
    {"deadline", 0, true, Scope::kAny,
     [](absl::string_view v, CommandLine& l) {
       return PositiveDuration(v, /*allow_infinite=*/true, l.deadline);
     }},
    {"head", 0, false, Scope::kRead,
     [](absl::string_view, CommandLine& l) {
       l.read.method = Method::kHead;
       return absl::OkStatus();
     }},
    {"header", 'H', true, Scope::kRead, &AddHeader},
    {"upstream", 0, true, Scope::kRead,
     [](absl::string_view v, CommandLine& l) {
       return NonEmpty(v, l.read.upstream);
     }},
    {"no_hedge", 0, false, Scope::kRead,
     [](absl::string_view, CommandLine& l) {
       l.read.disable_hedge = true;
       return absl::OkStatus();
     }},
    {"hedge_delay", 0, true, Scope::kRead,
     [](absl::string_view v, CommandLine& l) {
       return PositiveDuration(v, /*allow_infinite=*/false, l.read.hedge_delay);
     }},
    {"verbose", 'v', false, Scope::kRead,
     [](absl::string_view, CommandLine& l) {
       l.verbose = true;
       return absl::OkStatus();
     }},
    {"max_in_flight", 0, true, Scope::kMany,
     [](absl::string_view v, CommandLine& l) {
       if (!absl::SimpleAtoi(v, &l.max_in_flight) || l.max_in_flight == 0) {
         return absl::InvalidArgumentError(
             absl::StrCat("want a positive whole number, got '", v, "'"));
       }
       return absl::OkStatus();
     }},
    {"body", 0, false, Scope::kMany,
     [](absl::string_view, CommandLine& l) {
       l.body = true;
       return absl::OkStatus();
     }},
    {"json", 0, false, Scope::kStats,
     [](absl::string_view, CommandLine& l) {
       l.json = true;
       return absl::OkStatus();
     }},
};

// "-H" for options with a short name, "--name" otherwise.
std::string DisplayName(const Option& option) {
  if (option.short_name != 0) return std::string({'-', option.short_name});
  return absl::StrCat("--", option.long_name);
}

const Option* FindLong(absl::string_view name) {
  const std::string canonical = absl::StrReplaceAll(name, {{"-", "_"}});
  for (const Option& option : kOptions) {
    if (option.long_name == canonical) return &option;
  }
  return nullptr;
}

const Option* FindShort(char name) {
  for (const Option& option : kOptions) {
    if (option.short_name == name) return &option;
  }
  return nullptr;
}

absl::Status UsageError(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

bool WantsHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") return false;
    if (arg == "-h" || arg == "--help") return true;
  }
  return false;
}

// Sets the command (and the read's path) from the positional arguments.
absl::Status ApplyPositionals(const std::vector<std::string>& positionals,
                              CommandLine& line) {
  if (positionals.empty()) {
    return UsageError(
        "missing PATH (or a command: many, stats, metrics); see --help");
  }
  const std::string& first = positionals[0];
  if (first == "many") {
    line.command = Command::kMany;
    line.paths.assign(positionals.begin() + 1, positionals.end());
    return absl::OkStatus();
  }
  if (positionals.size() > 1) {
    return UsageError(absl::StrCat("unexpected argument '", positionals[1],
                                   "' after '", first, "'"));
  }
  if (first == "stats") {
    line.command = Command::kStats;
  } else if (first == "metrics") {
    line.command = Command::kMetrics;
  } else if (absl::StartsWith(first, "/")) {
    line.command = Command::kRead;
    line.read.path = first;
  } else if (absl::StrContains(first, "://")) {
    return UsageError(absl::StrCat(
        "PATH is origin-form: give the path and query only (e.g. /index.html), "
        "the sidecar holds the replica URLs; got '",
        first, "'"));
  } else {
    return UsageError(absl::StrCat(
        "PATH must start with '/' (e.g. /index.html?q=1), got '", first, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CommandLine> ParseCommandLine(
    const std::vector<std::string>& args) {
  CommandLine line;
  if (WantsHelp(args)) {
    line.command = Command::kHelp;
    return line;
  }
  std::vector<std::string> positionals;
  const Option* read_option_seen = nullptr;
  const Option* many_option_seen = nullptr;
  const Option* stats_option_seen = nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") {
      positionals.insert(positionals.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positionals.emplace_back(arg);
      continue;
    }
    const Option* option = nullptr;
    absl::string_view value;
    bool has_value = false;
    if (absl::ConsumePrefix(&arg, "--")) {
      const size_t equals = arg.find('=');
      has_value = equals != absl::string_view::npos;
      if (has_value) value = arg.substr(equals + 1);
      option = FindLong(arg.substr(0, equals));
    } else {
      option = FindShort(arg[1]);
      if (option != nullptr && option->takes_value && arg.size() > 2) {
        value = arg.substr(2);  // -Hvalue
        has_value = true;
      } else if (arg.size() > 2) {
        option = nullptr;
      }
    }
    if (option == nullptr) {
      return UsageError(
          absl::StrCat("unknown option '", args[i], "'; see --help"));
    }
    const std::string name = DisplayName(*option);
    if (option->takes_value && !has_value) {
      if (i + 1 == args.size()) {
        return UsageError(absl::StrCat(name, " needs a value"));
      }
      value = args[++i];
    }
    if (!option->takes_value && has_value) {
      return UsageError(absl::StrCat(name, " takes no value"));
    }
    if (absl::Status applied = option->apply(value, line); !applied.ok()) {
      return UsageError(absl::StrCat(name, ": ", applied.message()));
    }
    if (option->scope == Scope::kRead) read_option_seen = option;
    if (option->scope == Scope::kMany) many_option_seen = option;
    if (option->scope == Scope::kStats) stats_option_seen = option;
  }
  if (absl::Status status = ApplyPositionals(positionals, line); !status.ok()) {
    return status;
  }
  if (line.read.disable_hedge &&
      line.read.hedge_delay != absl::ZeroDuration()) {
    return UsageError("--no_hedge and --hedge_delay contradict each other");
  }
  const bool reads =
      line.command == Command::kRead || line.command == Command::kMany;
  if (!reads && read_option_seen != nullptr) {
    return UsageError(absl::StrCat(DisplayName(*read_option_seen),
                                   " applies to reads, not to '",
                                   positionals[0], "'"));
  }
  if (line.command != Command::kMany && many_option_seen != nullptr) {
    return UsageError(absl::StrCat(DisplayName(*many_option_seen),
                                   " applies to 'many' only"));
  }
  if (line.command != Command::kStats && stats_option_seen != nullptr) {
    return UsageError(absl::StrCat(DisplayName(*stats_option_seen),
                                   " applies to 'stats' only"));
  }
  return line;
}

std::vector<std::string> PathsFromText(absl::string_view text) {
  std::vector<std::string> paths;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::ConsumeSuffix(&line, "\r");
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    paths.emplace_back(line);
  }
  return paths;
}

std::string UsageText() {
  return absl::StrCat(
      R"(Usage:
  tailgate_read [OPTIONS] PATH        read PATH through the sidecar
  tailgate_read [OPTIONS] many [PATH]...
                                      read many paths as one batch (from
                                      stdin, one a line, when none is given)
  tailgate_read [--admin=ADDR] stats [--json]
                                      the sidecar's counters (Admin service)
  tailgate_read [--admin=ADDR] metrics
                                      the Prometheus text exposition

Reads one path through the Tailgate sidecar, which sends an idempotent HTTP
GET (or HEAD) to one of its replicas and hedges a slow or failed attempt on
another. The body goes to stdout, byte for byte. PATH is origin-form
('/users/42?fields=name'), sent as given: escapes are not decoded.

Read options:
  --target=ADDR      the sidecar: host:port or unix:/path
                     (default 127.0.0.1:8080)
  --head             HEAD instead of GET
  -H 'Name: value'   add a request header (repeatable; also --header)
  --upstream=NAME    the replica set (default: the sidecar's --backends)
  --no_hedge         no speculative hedge for this read
  --hedge_delay=DUR  hedge after DUR instead of the sidecar's --hedge_delay
  -v, --verbose      to stderr: the request, status line, headers and the
                     trace (attempts, hedged, hedge_won, replica, latency)

Many: the reads share the read options and the deadline, and the sidecar
hedges each on its own. One line per read goes to stdout as it completes:
  INDEX HTTP_STATUS BYTES PATH          an answer (any HTTP status)
  INDEX CODE - PATH MESSAGE             a read that failed (NOT_FOUND, ...)
INDEX is the read's position (from 0); -v adds the trace to answer lines
(attempts=N hedged=B hedge_won=B replica=URL latency=DUR), --body the body
(body="...", C-escaped). The exit code is the call's when the call fails
(after the lines of the reads that completed), else that of the failed
read with the lowest INDEX, as if it had been read alone; 0 when every
read got an HTTP status below 400.
  --max_in_flight=N  the sidecar runs at most N of the reads at once
  --body             end each answer line with its body

Stats options:
  --admin=ADDR       the sidecar's Admin listener (default 127.0.0.1:9090)
  --json             stats as one JSON object instead of a table

Common options:
  --deadline=DUR     deadline of the call (default 5s; "inf" for none). The
                     sidecar's --timeout caps a read's deadline too.
  -h, --help         this text

DUR is a number with a unit: 250ms, 1.5s, 2m. Write --name=value or
--name value; '-' and '_' are interchangeable in names (--no-hedge). '--'
ends the options. A usage error prints one line to stderr and exits 2.

Exit codes:
)",
      ExitCodeTable());
}

}  // namespace tailgate::cli
