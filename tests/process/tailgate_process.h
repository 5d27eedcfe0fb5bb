// TailgateProcess: the real `tailgate` binary as a child process (a
// ChildProcess), for the end-to-end tests and the experiment.
//
// Start runs it with the given flags plus ephemeral ports for all three
// listeners, captures its stderr (the lifecycle log), and waits for the
// three event=listening lines, which carry the bound addresses.
//
// Example:
//   absl::StatusOr<std::unique_ptr<TailgateProcess>> tailgate =
//       TailgateProcess::Start(binary, {"--backends=" + replica->url()});
//   auto channel = grpc::CreateChannel((*tailgate)->grpc_address(), ...);
//   (*tailgate)->Signal(SIGTERM);
//   EXPECT_EQ((*tailgate)->WaitForExit(absl::Seconds(10)), 0);
//
// Thread safety: safe from any thread. The destructor kills the process
// (SIGKILL) if it is still running.

#ifndef TAILGATE_TESTS_PROCESS_TAILGATE_PROCESS_H_
#define TAILGATE_TESTS_PROCESS_TAILGATE_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/process/child_process.h"

namespace tailgate::testing {

class TailgateProcess {
 public:
  // `binary` is the path to tailgate; `flags` are added after the
  // listener flags, so they may override them. The child inherits this
  // process's environment, except that each "NAME=value" in `environment`
  // replaces any inherited NAME (e.g. {"http_proxy=http://127.0.0.1:9"}).
  static absl::StatusOr<std::unique_ptr<TailgateProcess>> Start(
      const std::string& binary, const std::vector<std::string>& flags,
      const std::vector<std::string>& environment = {});

  TailgateProcess(const TailgateProcess&) = delete;
  TailgateProcess& operator=(const TailgateProcess&) = delete;

  // As logged: "127.0.0.1:43121".
  const std::string& grpc_address() const { return grpc_address_; }
  const std::string& admin_address() const { return admin_address_; }
  int metrics_port() const { return metrics_port_; }
  pid_t pid() const { return child_->pid(); }

  void Signal(int signal) const { child_->Signal(signal); }

  // The exit code (128 + signal if killed by one), or nullopt if still
  // running after `timeout`. Its stderr has been read to the end once it
  // returns a code.
  std::optional<int> WaitForExit(absl::Duration timeout) {
    return child_->Wait(timeout);
  }

  // The first stderr line containing `text`, waiting up to `timeout`.
  std::optional<std::string> WaitForLine(const std::string& text,
                                         absl::Duration timeout) const {
    return child_->WaitForLine(Stream::kStderr, text, timeout);
  }
  std::string stderr_text() const { return child_->captured(Stream::kStderr); }

  // The addr= of the event=listening line for `service` ("grpc", "admin",
  // "metrics", "http", "read"), waiting for it up to the start timeout.
  absl::StatusOr<std::string> ListeningAddress(const std::string& service);

 private:
  explicit TailgateProcess(std::unique_ptr<ChildProcess> child)
      : child_(std::move(child)) {}

  const std::unique_ptr<ChildProcess> child_;
  // Set by Start, constant afterwards.
  std::string grpc_address_;
  std::string admin_address_;
  int metrics_port_ = 0;
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_PROCESS_TAILGATE_PROCESS_H_
