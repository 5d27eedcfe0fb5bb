#include "experiment/sidecar_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(20);
constexpr absl::Duration kStopTimeout = absl::Seconds(10);

// In the forked child: only async-signal-safe calls until execv.
[[noreturn]] void ExecChild(const std::vector<char*>& argv, int output_fd) {
  // The child must not outlive an experiment that is killed.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() == 1) _exit(127);
  // Its stdout too: the experiment's own stdout carries JSON lines only.
  dup2(output_fd, STDOUT_FILENO);
  dup2(output_fd, STDERR_FILENO);
  // Start with no signal blocked, as from a shell.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execv(argv[0], argv.data());
  _exit(127);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SidecarProcess>> SidecarProcess::Start(
    const std::string& binary, const std::string& backends,
    const std::vector<std::string>& flags) {
  std::vector<std::string> args = {
      binary, "--backends=" + backends, "--listen=127.0.0.1:0",
      "--admin=127.0.0.1:0", "--metrics_listen=127.0.0.1:0"};
  args.insert(args.end(), flags.begin(), flags.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError("cannot create a pipe for the sidecar");
  }
  const pid_t pid = fork();
  if (pid == 0) ExecChild(argv, fds[1]);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return absl::InternalError("cannot fork the sidecar");
  }

  std::unique_ptr<SidecarProcess> process(new SidecarProcess(pid, fds[0]));
  for (auto [service, address] :
       {std::pair{"grpc", &process->grpc_address_},
        std::pair{"admin", &process->admin_address_},
        std::pair{"metrics", &process->metrics_address_}}) {
    absl::StatusOr<std::string> found = process->ListeningAddress(service);
    if (!found.ok()) return found.status();
    *address = *std::move(found);
  }
  return process;
}

SidecarProcess::SidecarProcess(pid_t pid, int stderr_fd)
    : pid_(pid), stderr_fd_(stderr_fd), reader_([this] { ReadStderr(); }) {}

SidecarProcess::~SidecarProcess() {
  if (!WaitForExit(absl::ZeroDuration()).ok()) {
    kill(pid_, SIGKILL);
    WaitForExit(absl::InfiniteDuration()).IgnoreError();
  }
  reader_.join();
  close(stderr_fd_);
}

void SidecarProcess::ReadStderr() {
  char buf[4096];
  for (ssize_t n; (n = read(stderr_fd_, buf, sizeof(buf))) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    absl::MutexLock lock(&mu_);
    stderr_.append(buf, n);
  }
  absl::MutexLock lock(&mu_);
  stderr_closed_ = true;
}

absl::StatusOr<std::string> SidecarProcess::ListeningAddress(
    absl::string_view service) {
  const std::string marker =
      absl::StrCat("event=listening service=", service, " addr=");
  absl::MutexLock lock(&mu_);
  auto logged_or_closed = [this, &marker]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return stderr_closed_ || absl::StrContains(stderr_, marker);
  };
  mu_.AwaitWithTimeout(absl::Condition(&logged_or_closed), kStartTimeout);
  const size_t at = stderr_.find(marker);
  if (at == std::string::npos) {
    return absl::UnavailableError(absl::StrCat(
        "the sidecar did not log \"", marker, "\"; its stderr:\n", stderr_));
  }
  const size_t start = at + marker.size();
  return stderr_.substr(start, stderr_.find_first_of(" \n", start) - start);
}

absl::StatusOr<int64_t> SidecarProcess::PeakRssKib() const {
  const std::string path = absl::StrCat("/proc/", pid_, "/status");
  std::ifstream status(path);
  for (std::string line; std::getline(status, line);) {
    absl::string_view value = line;
    if (!absl::ConsumePrefix(&value, "VmHWM:")) continue;
    value = absl::StripSuffix(absl::StripAsciiWhitespace(value), "kB");
    int64_t kib = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(value), &kib)) return kib;
  }
  return absl::UnavailableError(absl::StrCat("no VmHWM in ", path));
}

absl::Status SidecarProcess::Stop() {
  kill(pid_, SIGTERM);
  absl::StatusOr<int> code = WaitForExit(kStopTimeout);
  if (!code.ok()) {
    kill(pid_, SIGKILL);
    WaitForExit(absl::InfiniteDuration()).IgnoreError();
    return absl::DeadlineExceededError(absl::StrCat(
        "the sidecar did not stop within ", absl::FormatDuration(kStopTimeout),
        "; its stderr:\n", stderr_text()));
  }
  if (*code != 0) {
    return absl::InternalError(absl::StrCat("the sidecar exited with ", *code,
                                            "; its stderr:\n", stderr_text()));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> SidecarProcess::WaitForExit(absl::Duration timeout) {
  // The child holds the only write end of the stderr pipe, so the pipe
  // closes when it exits; waitpid then returns at once.
  absl::MutexLock lock(&mu_);
  auto closed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stderr_closed_;
  };
  if (!reaped_ && mu_.AwaitWithTimeout(absl::Condition(&closed), timeout)) {
    int status = 0;
    if (waitpid(pid_, &status, 0) == pid_) {
      reaped_ = true;
      exit_code_ =
          WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    }
  }
  if (!reaped_) return absl::DeadlineExceededError("still running");
  return exit_code_;
}

std::string SidecarProcess::stderr_text() const {
  absl::MutexLock lock(&mu_);
  return stderr_;
}

}  // namespace tailgate::experiment
