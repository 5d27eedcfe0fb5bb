// tailgate_read: a curl-like command-line client of the Tailgate sidecar.
// See UsageText() in command_line.cc (tailgate_read --help) and README.md.

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/admin_client.h"
#include "client/client.h"
#include "client/command_line.h"
#include "client/exit_codes.h"
#include "client/text_output.h"

namespace tailgate::cli {
namespace {

void PrintToStderr(absl::string_view text) {
  fwrite(text.data(), 1, text.size(), stderr);
}

int Fail(const absl::Status& status) {
  PrintToStderr(FormatError(status));
  return ExitCodeForError(status);
}

// Writes `bytes` to stdout, binary-safe; false (and a line on stderr) when
// stdout does not take them.
bool WriteStdout(absl::string_view bytes) {
  if (fwrite(bytes.data(), 1, bytes.size(), stdout) == bytes.size() &&
      fflush(stdout) == 0) {
    return true;
  }
  PrintToStderr(absl::StrCat(
      "tailgate_read: cannot write to stdout: ", strerror(errno), "\n"));
  return false;
}

int Write(absl::string_view bytes, int exit_code) {
  return WriteStdout(bytes) ? exit_code : kExitOutputError;
}

ClientOptions Options(const CommandLine& line) {
  ClientOptions options;
  options.default_deadline = line.deadline;
  return options;
}

int RunRead(const CommandLine& line) {
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Connect(line.target, Options(line));
  if (!client.ok()) return Fail(client.status());
  if (line.verbose) {
    PrintToStderr(FormatRequest(line.target, line.deadline, line.read));
  }
  absl::StatusOr<ReadResponse> response = (*client)->Read(line.read);
  if (!response.ok()) return Fail(response.status());
  if (line.verbose) PrintToStderr(FormatResponse(*response));
  return Write(response->body, ExitCodeForHttpStatus(response->status));
}

// All of stdin; false (and a line on stderr) when it cannot be read.
bool ReadStdin(std::string& text) {
  char buffer[1 << 16];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), stdin)) > 0) {
    text.append(buffer, n);
  }
  if (ferror(stdin)) {
    PrintToStderr(absl::StrCat(
        "tailgate_read: cannot read stdin: ", strerror(errno), "\n"));
    return false;
  }
  return true;
}

// One batch: a line per read as it completes, then the exit code (see
// UsageText).
int RunMany(const CommandLine& line) {
  std::vector<std::string> paths = line.paths;
  if (paths.empty()) {
    std::string text;
    if (!ReadStdin(text)) return kExitUsage;
    paths = PathsFromText(text);
  }
  ReadManyRequest batch;
  batch.reads.reserve(paths.size());
  for (std::string& path : paths) {
    ReadRequest& read = batch.reads.emplace_back(line.read);
    read.path = std::move(path);
  }
  batch.max_in_flight = line.max_in_flight;
  Cancellation cancellation;
  batch.cancellation = &cancellation;
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Connect(line.target, Options(line));
  if (!client.ok()) return Fail(client.status());
  size_t failed_index = batch.reads.size();  // lowest failed index so far
  int failed_exit_code = kExitOk;
  bool output_failed = false;
  const absl::Status status =
      (*client)->ReadMany(batch, [&](ReadManyItem item) {
        if (output_failed) return;
        if (!WriteStdout(FormatManyItem(item, batch.reads[item.index].path,
                                        line.verbose, line.body))) {
          output_failed = true;
          cancellation.Cancel();  // nobody reads the rest
          return;
        }
        const int exit_code = ExitCodeForRead(item.response);
        if (exit_code != kExitOk && item.index < failed_index) {
          failed_index = item.index;
          failed_exit_code = exit_code;
        }
      });
  if (output_failed) return kExitOutputError;
  if (!status.ok()) return Fail(status);
  return failed_exit_code;
}

int RunAdmin(const CommandLine& line) {
  absl::StatusOr<std::unique_ptr<AdminClient>> admin =
      AdminClient::Connect(line.admin, Options(line));
  if (!admin.ok()) return Fail(admin.status());
  if (line.command == Command::kMetrics) {
    absl::StatusOr<MetricsText> metrics = (*admin)->GetMetrics();
    if (!metrics.ok()) return Fail(metrics.status());
    return Write(metrics->text, kExitOk);
  }
  absl::StatusOr<SidecarStats> stats = (*admin)->GetStats();
  if (!stats.ok()) return Fail(stats.status());
  return Write(line.json ? FormatStatsJson(*stats) : FormatStatsTable(*stats),
               kExitOk);
}

int Run(const std::vector<std::string>& args) {
  absl::StatusOr<CommandLine> line = ParseCommandLine(args);
  if (!line.ok()) {
    PrintToStderr(
        absl::StrCat("tailgate_read: ", line.status().message(), "\n"));
    return kExitUsage;
  }
  switch (line->command) {
    case Command::kHelp:
      return Write(UsageText(), kExitOk);
    case Command::kRead:
      return RunRead(*line);
    case Command::kMany:
      return RunMany(*line);
    case Command::kStats:
    case Command::kMetrics:
      return RunAdmin(*line);
  }
  return kExitOtherError;
}

}  // namespace
}  // namespace tailgate::cli

int main(int argc, char** argv) {
  return tailgate::cli::Run(std::vector<std::string>(argv + 1, argv + argc));
}
