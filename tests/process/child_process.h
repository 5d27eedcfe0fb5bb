// ChildProcess: a program run as a child of this process, for the tests and
// the experiment (the sidecar, nginx, h2load, openssl, gnuplot, a peer
// gateway, the tailgate_read command).
//
// The child starts as from a shell: no signal blocked, every disposition
// the default (a test runner or the experiment's threads may block
// signals, and the sidecar must still see SIGTERM and SIGHUP). argv[0] is
// looked up on PATH unless it contains a '/'. It inherits this process's
// environment, except that each "NAME=value" in `environment` replaces any
// inherited NAME. Each standard stream goes where ChildOptions says: a
// captured stream is read into memory by a thread of its own, and
// WaitForLine waits for a line in it (a log line such as the sidecar's
// `event=listening`).
//
// Example:
//   ChildOptions options;
//   options.argv = {"h2load", "-c", "4", url};
//   options.stdout_to = Output::AppendTo(log);  // or LoggedTo(argv, log)
//   options.stderr_to = Output::SameAsStdout();
//   absl::StatusOr<std::unique_ptr<ChildProcess>> h2load =
//       ChildProcess::Start(std::move(options));
//   std::optional<int> code = (*h2load)->Wait(absl::Seconds(30));
//
// Thread safety: every method is safe from any thread. The destructor
// stops the program if it is still running (Stop with the options'
// stop_grace) and must not race with other calls.

#ifndef TAILGATE_TESTS_PROCESS_CHILD_PROCESS_H_
#define TAILGATE_TESTS_PROCESS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hedge/sync/mutex.h"

namespace tailgate::testing {

// Where a standard stream of the child goes (or, for stdin, comes from).
class Output {
 public:
  enum class Kind {
    kInherit,       // this process's own stream
    kNull,          // /dev/null
    kFile,          // a file, truncated (stdin: read from it)
    kAppend,        // a file, appended to
    kCapture,       // a pipe read into memory (stdout and stderr only)
    kParentStderr,  // this process's stderr (stdout only)
    kSameAsStdout,  // wherever stdout goes (stderr only)
  };

  static Output Inherit() { return Output(Kind::kInherit, ""); }
  static Output Null() { return Output(Kind::kNull, ""); }
  static Output File(std::string path) {
    return Output(Kind::kFile, std::move(path));
  }
  static Output AppendTo(std::string path) {
    return Output(Kind::kAppend, std::move(path));
  }
  static Output Capture() { return Output(Kind::kCapture, ""); }
  static Output ParentStderr() { return Output(Kind::kParentStderr, ""); }
  static Output SameAsStdout() { return Output(Kind::kSameAsStdout, ""); }

  Kind kind() const { return kind_; }
  const std::string& path() const { return path_; }

 private:
  Output(Kind kind, std::string path) : kind_(kind), path_(std::move(path)) {}

  Kind kind_;
  std::string path_;
};

struct ChildOptions {
  std::vector<std::string> argv;         // argv[0] is the program
  std::vector<std::string> environment;  // "NAME=value" overrides
  Output stdin_from = Output::Inherit();
  Output stdout_to = Output::Inherit();
  Output stderr_to = Output::Inherit();
  // What Stop() (and the destructor) give the child between SIGTERM and
  // SIGKILL; zero sends SIGKILL at once.
  absl::Duration stop_grace = absl::Seconds(2);
};

enum class Stream { kStdout, kStderr };

class ChildProcess {
 public:
  // An error if the program cannot be run (not found, not executable) or
  // a stream cannot be opened.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(
      ChildOptions options);

  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Sends `signal` unless the child has been reaped (its pid may be reused
  // by then).
  void Signal(int signal) const;

  // The exit code (128 + signal if a signal ended it), or nullopt if it is
  // still running after `timeout`. Reaps the child. Captured streams have
  // been read to their end once it returns a code (a grandchild that holds
  // one open delays that).
  std::optional<int> Wait(absl::Duration timeout);

  // SIGTERM, then SIGKILL if it has not exited within `grace` (at once if
  // `grace` is zero); the exit code. Returns at once if it has exited.
  int Stop(absl::Duration grace);
  int Stop() { return Stop(stop_grace_); }

  // The first complete line of a captured stream containing `text`
  // (without its '\n'), waiting up to `timeout`; nullopt if none came by
  // then or the stream ended without one. A last line without '\n' counts
  // once the stream has ended.
  std::optional<std::string> WaitForLine(Stream stream, const std::string& text,
                                         absl::Duration timeout) const;

  // What a captured stream has said so far ("" if not captured).
  std::string captured(Stream stream) const;

 private:
  ChildProcess(pid_t pid, int pidfd, absl::Duration stop_grace);
  // Reads `fd` into text_[stream] on a thread of its own until it ends.
  void StartCapture(Stream stream, int fd);
  void ReadCapture(int index);
  bool CapturesEnded() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const pid_t pid_;
  const int pidfd_;  // -1 where the kernel has no pidfd_open
  const absl::Duration stop_grace_;
  // Indexed by Stream; set by Start, constant afterwards (-1: not
  // captured).
  int capture_fds_[2] = {-1, -1};
  std::thread readers_[2];

  // hedge::Mutex, not absl::Mutex: ThreadSanitizer sees it (the tests
  // that use threads run under TSan).
  mutable hedge::Mutex mu_;
  mutable hedge::CondVar changed_;  // a capture grew or ended
  std::optional<int> exit_code_ ABSL_GUARDED_BY(mu_);
  std::string text_[2] ABSL_GUARDED_BY(mu_);
  bool ended_[2] ABSL_GUARDED_BY(mu_) = {true, true};
};

// `argv` with its stdout and stderr appended to `log_path` (a helper
// program whose output is read when it fails); stdin inherited.
ChildOptions LoggedTo(std::vector<std::string> argv,
                      const std::string& log_path);

// What a program run to its end did.
struct ChildResult {
  int exit_code = -1;       // 128 + signal if a signal ended it
  std::string stdout_text;  // if captured
  std::string stderr_text;  // if captured
};

// Starts `options` and waits for its exit; DeadlineExceeded (after
// stopping it) if it runs longer than `timeout`.
absl::StatusOr<ChildResult> RunToExit(
    ChildOptions options, absl::Duration timeout = absl::InfiniteDuration());

// From its return on, ChildProcess::Start starts nothing (it returns
// CANCELLED); a Start under way when it is called has finished, its child
// visible among this process's children, when it returns. For a process
// stopping its children on a signal (experiment/stop_children.h): a
// program started after the last look for children would outlive it.
// Thread safety: any thread.
void StopSpawning();

// The whole text of `path`: "" if it cannot be opened, what was read
// before the error if a read fails (as /proc/PID files do with ESRCH once
// PID has exited). Plain read(2), so it never throws: reading a file of a
// process that is gone is an expected outcome.
std::string ReadWholeFile(const std::string& path);

// Connects to 127.0.0.1:`port` until it accepts or `timeout` passes.
bool WaitForPort(int port, absl::Duration timeout);

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_PROCESS_CHILD_PROCESS_H_
