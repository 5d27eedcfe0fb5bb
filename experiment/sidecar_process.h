// SidecarProcess: the real `tailgate` binary (//server:tailgate) as a child
// of the experiment, one per policy, so that every measurement starts from
// a fresh sidecar (empty counters, full hedge credit, rotation at A).
//
// Start runs `binary --backends=... --listen=127.0.0.1:0 --admin=127.0.0.1:0
// --metrics_listen=127.0.0.1:0 FLAGS...`, reads its stderr (the logfmt
// lifecycle log) on a thread of its own, and waits for the three
// `event=listening service=grpc|admin|metrics addr=HOST:PORT` lines, which
// carry the ports the kernel chose. The child gets SIGTERM if the
// experiment dies first.
//
// Example:
//   absl::StatusOr<std::unique_ptr<SidecarProcess>> sidecar =
//       SidecarProcess::Start(binary, replicas->backends(),
//                             {"--hedge_fraction=0"});
//   ... Client::Connect((*sidecar)->grpc_address()) ...
//   absl::Status stopped = (*sidecar)->Stop();
//
// Thread safety: safe from any thread. The destructor kills the child if it
// is still running.

#ifndef TAILGATE_EXPERIMENT_SIDECAR_PROCESS_H_
#define TAILGATE_EXPERIMENT_SIDECAR_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tailgate::experiment {

class SidecarProcess {
 public:
  static absl::StatusOr<std::unique_ptr<SidecarProcess>> Start(
      const std::string& binary, const std::string& backends,
      const std::vector<std::string>& flags);

  ~SidecarProcess();
  SidecarProcess(const SidecarProcess&) = delete;
  SidecarProcess& operator=(const SidecarProcess&) = delete;

  // As logged, "127.0.0.1:43121". Constant after Start.
  const std::string& grpc_address() const { return grpc_address_; }
  const std::string& admin_address() const { return admin_address_; }
  const std::string& metrics_address() const { return metrics_address_; }

  // The child's peak resident set (VmHWM in /proc/PID/status), in KiB.
  // REQUIRES: the child is running (before Stop).
  absl::StatusOr<int64_t> PeakRssKib() const;

  // SIGTERM, then waits for the drain and the exit (SIGKILL after 10 s).
  // An error when the child did not exit 0; its stderr is in the message.
  absl::Status Stop();

 private:
  SidecarProcess(pid_t pid, int stderr_fd);
  void ReadStderr();
  // The addr= of the event=listening line for `service`.
  absl::StatusOr<std::string> ListeningAddress(absl::string_view service);
  // Waits up to `timeout` for the child to close its stderr (it exits),
  // then reaps it. The exit code, 128 + signal when killed by one.
  absl::StatusOr<int> WaitForExit(absl::Duration timeout);
  std::string stderr_text() const;

  // Constant after construction.
  const pid_t pid_;
  const int stderr_fd_;
  // Set by Start, constant afterwards.
  std::string grpc_address_;
  std::string admin_address_;
  std::string metrics_address_;

  mutable absl::Mutex mu_;
  std::string stderr_ ABSL_GUARDED_BY(mu_);
  bool stderr_closed_ ABSL_GUARDED_BY(mu_) = false;
  bool reaped_ ABSL_GUARDED_BY(mu_) = false;
  int exit_code_ ABSL_GUARDED_BY(mu_) = -1;

  std::thread reader_;  // last: starts once the members above exist
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_SIDECAR_PROCESS_H_
