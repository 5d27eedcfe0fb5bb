#include "tests/e2e/tailgate_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tests/e2e/shell_like_spawn.h"

extern char** environ;

namespace tailgate::testing {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(20);

absl::string_view NameOf(absl::string_view entry) {
  return entry.substr(0, entry.find('='));
}

// `environ` with the variables that `overrides` names replaced by theirs.
std::vector<std::string> ChildEnvironment(
    const std::vector<std::string>& overrides) {
  absl::flat_hash_set<absl::string_view> replaced;
  for (const std::string& entry : overrides) replaced.insert(NameOf(entry));
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!replaced.contains(NameOf(*entry))) environment.emplace_back(*entry);
  }
  environment.insert(environment.end(), overrides.begin(), overrides.end());
  return environment;
}

std::vector<char*> NullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TailgateProcess>> TailgateProcess::Start(
    const std::string& binary, const std::vector<std::string>& flags,
    const std::vector<std::string>& environment) {
  std::vector<std::string> args = {binary, "--listen=127.0.0.1:0",
                                   "--admin=127.0.0.1:0",
                                   "--metrics_listen=127.0.0.1:0"};
  args.insert(args.end(), flags.begin(), flags.end());
  std::vector<char*> argv = NullTerminated(args);
  std::vector<std::string> env = ChildEnvironment(environment);
  std::vector<char*> envp = NullTerminated(env);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  const ShellLikeSpawnAttr attr;
  pid_t pid = 0;
  const int error = posix_spawn(&pid, binary.c_str(), &actions, attr.get(),
                                argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (error != 0) {
    close(fds[0]);
    return absl::InternalError(absl::StrCat("cannot run ", binary));
  }

  std::unique_ptr<TailgateProcess> process(new TailgateProcess(pid, fds[0]));
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

TailgateProcess::TailgateProcess(pid_t pid, int stderr_fd)
    : pid_(pid), stderr_fd_(stderr_fd), reader_([this] { ReadStderr(); }) {}

TailgateProcess::~TailgateProcess() {
  if (!WaitForExit(absl::ZeroDuration()).has_value()) {
    kill(pid_, SIGKILL);
    WaitForExit(absl::InfiniteDuration());
  }
  reader_.join();
  close(stderr_fd_);
}

void TailgateProcess::ReadStderr() {
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

void TailgateProcess::Signal(int signal) const { kill(pid_, signal); }

std::optional<int> TailgateProcess::WaitForExit(absl::Duration timeout) {
  // The child holds the only write end of the stderr pipe, so the pipe
  // closes when it exits; waitpid then returns at once.
  absl::MutexLock lock(&mu_);
  auto closed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stderr_closed_;
  };
  if (!exit_code_.has_value() &&
      mu_.AwaitWithTimeout(absl::Condition(&closed), timeout)) {
    int status = 0;
    if (waitpid(pid_, &status, 0) == pid_) {
      exit_code_ =
          WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    }
  }
  return exit_code_;
}

std::optional<std::string> TailgateProcess::WaitForLine(
    const std::string& text, absl::Duration timeout) const {
  auto found_or_closed = [this, &text]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return stderr_closed_ || stderr_.find(text) != std::string::npos;
  };
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&found_or_closed), timeout);
  const size_t at = stderr_.find(text);
  if (at == std::string::npos) return std::nullopt;
  const size_t begin = stderr_.rfind('\n', at);
  const size_t end = stderr_.find('\n', at);
  const size_t from = begin == std::string::npos ? 0 : begin + 1;
  return stderr_.substr(from, end == std::string::npos ? end : end - from);
}

std::string TailgateProcess::stderr_text() const {
  absl::MutexLock lock(&mu_);
  return stderr_;
}

}  // namespace tailgate::testing
