// TailgateProcess: the real `tailgate` binary as a child process, for
// end-to-end tests.
//
// Start runs it with the given flags plus ephemeral ports for all three
// listeners, collects its stderr (the lifecycle log) on a thread, and waits
// for the three event=listening lines, which carry the bound addresses.
//
// Example:
//   absl::StatusOr<std::unique_ptr<TailgateProcess>> tailgate =
//       TailgateProcess::Start(binary, {"--backends=" + replica->url()});
//   auto channel = grpc::CreateChannel((*tailgate)->grpc_address(), ...);
//   (*tailgate)->Signal(SIGTERM);
//   EXPECT_EQ((*tailgate)->WaitForExit(absl::Seconds(10)), 0);
//
// Thread safety: safe from any thread. The destructor kills the process if
// it is still running.

#ifndef TAILGATE_TESTS_E2E_TAILGATE_PROCESS_H_
#define TAILGATE_TESTS_E2E_TAILGATE_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

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

  ~TailgateProcess();
  TailgateProcess(const TailgateProcess&) = delete;
  TailgateProcess& operator=(const TailgateProcess&) = delete;

  // As logged: "127.0.0.1:43121".
  const std::string& grpc_address() const { return grpc_address_; }
  const std::string& admin_address() const { return admin_address_; }
  int metrics_port() const { return metrics_port_; }
  pid_t pid() const { return pid_; }

  void Signal(int signal) const;

  // The exit code (128 + signal if killed by one), or nullopt if still
  // running after `timeout`.
  std::optional<int> WaitForExit(absl::Duration timeout);

  // The first stderr line containing `text`, waiting up to `timeout`.
  std::optional<std::string> WaitForLine(const std::string& text,
                                         absl::Duration timeout) const;
  std::string stderr_text() const;

  // The addr= of the event=listening line for `service` ("grpc", "admin",
  // "metrics", "http", "read"), waiting for it up to the start timeout.
  absl::StatusOr<std::string> ListeningAddress(const std::string& service);

 private:
  TailgateProcess(pid_t pid, int stderr_fd);
  void ReadStderr();

  const pid_t pid_;
  const int stderr_fd_;
  std::thread reader_;
  // Set by Start, constant afterwards.
  std::string grpc_address_;
  std::string admin_address_;
  int metrics_port_ = 0;

  mutable absl::Mutex mu_;
  std::string stderr_ ABSL_GUARDED_BY(mu_);
  bool stderr_closed_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<int> exit_code_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_E2E_TAILGATE_PROCESS_H_
