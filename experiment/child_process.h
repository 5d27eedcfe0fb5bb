// ChildProcess: a helper program the cost scenario runs beside the sidecar
// (nginx, h2load, a peer gateway), found on PATH like a shell would, with
// no signal blocked, its stdout and stderr appended to one file.
//
// Example:
//   absl::StatusOr<std::unique_ptr<ChildProcess>> h2load =
//       ChildProcess::Start({"h2load", "-c", "4", url}, out_path);
//   std::optional<int> code = (*h2load)->Wait(absl::Seconds(30));
//
// Thread safety: one thread uses a ChildProcess. The destructor stops the
// program if it is still running (SIGTERM, then SIGKILL after 2 s).

#ifndef TAILGATE_EXPERIMENT_CHILD_PROCESS_H_
#define TAILGATE_EXPERIMENT_CHILD_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tailgate::experiment {

class ChildProcess {
 public:
  // argv[0] is looked up on PATH unless it contains a '/'.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(
      const std::vector<std::string>& argv, const std::string& output_path);

  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // The exit code (128 + signal if a signal ended it), or nullopt if it is
  // still running after `timeout`.
  std::optional<int> Wait(absl::Duration timeout);

  // SIGTERM, then SIGKILL if it has not exited within 2 s; the exit code.
  int Stop();

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}

  const pid_t pid_;
  std::optional<int> exit_code_;
};

// The whole text of `path` ("" if it cannot be read).
std::string ReadWholeFile(const std::string& path);

// Connects to 127.0.0.1:`port` until it accepts or `timeout` passes.
bool WaitForPort(int port, absl::Duration timeout);

// A TCP port on 127.0.0.1 that nothing listens on now (bound and released:
// another process could take it before the caller does).
absl::StatusOr<int> UnusedPort();

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_CHILD_PROCESS_H_
