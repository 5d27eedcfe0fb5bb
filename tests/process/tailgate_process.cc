#include "tests/process/tailgate_process.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tailgate::testing {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(20);

}  // namespace

absl::StatusOr<std::unique_ptr<TailgateProcess>> TailgateProcess::Start(
    const std::string& binary, const std::vector<std::string>& flags,
    const std::vector<std::string>& environment) {
  std::vector<std::string> args = {binary, "--listen=127.0.0.1:0",
                                   "--admin=127.0.0.1:0",
                                   "--metrics_listen=127.0.0.1:0"};
  args.insert(args.end(), flags.begin(), flags.end());
  ChildOptions options;
  options.argv = std::move(args);
  options.environment = environment;
  options.stderr_to = Output::Capture();
  options.stop_grace = absl::ZeroDuration();  // SIGKILL when destroyed
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start(std::move(options));
  if (!child.ok()) return child.status();

  std::unique_ptr<TailgateProcess> process(
      new TailgateProcess(*std::move(child)));
  absl::StatusOr<std::string> grpc = process->ListeningAddress("grpc");
  absl::StatusOr<std::string> admin = process->ListeningAddress("admin");
  absl::StatusOr<std::string> metrics = process->ListeningAddress("metrics");
  for (const auto* address : {&grpc, &admin, &metrics}) {
    if (!address->ok()) return address->status();
  }
  process->grpc_address_ = *grpc;
  process->admin_address_ = *admin;
  const std::string port = metrics->substr(metrics->rfind(':') + 1);
  if (!absl::SimpleAtoi(port, &process->metrics_port_)) {
    return absl::InternalError(absl::StrCat("bad metrics address ", *metrics));
  }
  return process;
}

absl::StatusOr<std::string> TailgateProcess::ListeningAddress(
    const std::string& service) {
  const std::string marker =
      absl::StrCat("event=listening service=", service, " addr=");
  std::optional<std::string> line = WaitForLine(marker, kStartTimeout);
  if (!line.has_value()) {
    return absl::DeadlineExceededError(absl::StrCat(
        "tailgate did not log ", marker, "; stderr:\n", stderr_text()));
  }
  const size_t start = line->find(marker) + marker.size();
  return line->substr(start, line->find(' ', start) - start);
}

}  // namespace tailgate::testing
