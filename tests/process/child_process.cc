#include "tests/process/child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"

extern char** environ;

namespace tailgate::testing {
namespace {

// Without a pidfd, Wait looks at the child this often.
constexpr absl::Duration kWaitStep = absl::Milliseconds(5);

// Through syscall(): Debian 12's <sys/pidfd.h> is not C++-linkable.
int PidfdOpen(pid_t pid) {
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
}
void PidfdSignal(int pidfd, int signal) {
  syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0);
}

int Index(Stream stream) { return stream == Stream::kStdout ? 0 : 1; }

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

// posix_spawn attributes under which a child starts as from a shell: no
// signal blocked and every disposition the default.
class ShellLikeSpawnAttr {
 public:
  ShellLikeSpawnAttr() {
    posix_spawnattr_init(&attr_);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setsigdefault(&attr_, &all);
    posix_spawnattr_setflags(&attr_,
                             POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  ~ShellLikeSpawnAttr() { posix_spawnattr_destroy(&attr_); }
  ShellLikeSpawnAttr(const ShellLikeSpawnAttr&) = delete;
  ShellLikeSpawnAttr& operator=(const ShellLikeSpawnAttr&) = delete;

  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

// The file actions that send the child's streams where the options say,
// and the read ends of the capture pipes (closed by the destructor unless
// released).
class StreamActions {
 public:
  StreamActions() { posix_spawn_file_actions_init(&actions_); }
  ~StreamActions() {
    posix_spawn_file_actions_destroy(&actions_);
    for (int fd : write_ends_) close(fd);
    for (int fd : read_ends_) {
      if (fd >= 0) close(fd);
    }
  }
  StreamActions(const StreamActions&) = delete;
  StreamActions& operator=(const StreamActions&) = delete;

  absl::Status SetInput(const Output& from) {
    switch (from.kind()) {
      case Output::Kind::kInherit:
        return absl::OkStatus();
      case Output::Kind::kNull:
        return Open(STDIN_FILENO, "/dev/null", O_RDONLY);
      case Output::Kind::kFile:
        return Open(STDIN_FILENO, from.path(), O_RDONLY);
      default:
        return absl::InvalidArgumentError("stdin can only be read from");
    }
  }

  absl::Status SetOutput(int fd, const Output& to) {
    switch (to.kind()) {
      case Output::Kind::kInherit:
        return absl::OkStatus();
      case Output::Kind::kNull:
        return Open(fd, "/dev/null", O_WRONLY);
      case Output::Kind::kFile:
        return Open(fd, to.path(), O_WRONLY | O_CREAT | O_TRUNC);
      case Output::Kind::kAppend:
        return Open(fd, to.path(), O_WRONLY | O_CREAT | O_APPEND);
      case Output::Kind::kCapture: {
        int ends[2];
        if (pipe2(ends, O_CLOEXEC) != 0) {
          return absl::InternalError(
              absl::StrCat("pipe: ", std::strerror(errno)));
        }
        read_ends_[fd == STDOUT_FILENO ? 0 : 1] = ends[0];
        write_ends_.push_back(ends[1]);
        return Check(posix_spawn_file_actions_adddup2(&actions_, ends[1], fd));
      }
      case Output::Kind::kParentStderr:
        if (fd == STDERR_FILENO) return absl::OkStatus();
        return Check(
            posix_spawn_file_actions_adddup2(&actions_, STDERR_FILENO, fd));
      case Output::Kind::kSameAsStdout:
        if (fd == STDOUT_FILENO) {
          return absl::InvalidArgumentError("stdout cannot follow itself");
        }
        return Check(
            posix_spawn_file_actions_adddup2(&actions_, STDOUT_FILENO, fd));
    }
    return absl::InvalidArgumentError("unknown output");
  }

  const posix_spawn_file_actions_t* get() const { return &actions_; }

  // The parent's copies of the pipes' write ends, once the child has its
  // own: closed, so that a pipe ends when the child (and whatever it
  // started) is gone.
  void CloseWriteEnds() {
    for (int fd : write_ends_) close(fd);
    write_ends_.clear();
  }

  // The read end capturing stdout (0) or stderr (1), or -1; the caller
  // owns it.
  int ReleaseReadEnd(int index) { return std::exchange(read_ends_[index], -1); }

 private:
  absl::Status Open(int fd, const std::string& path, int flags) {
    return Check(posix_spawn_file_actions_addopen(&actions_, fd, path.c_str(),
                                                  flags, 0644));
  }
  static absl::Status Check(int error) {
    if (error == 0) return absl::OkStatus();
    return absl::InternalError(std::strerror(error));
  }

  posix_spawn_file_actions_t actions_;
  std::vector<int> write_ends_;
  int read_ends_[2] = {-1, -1};
};

// The first line of `text` containing `what`; the unfinished last line
// counts only once `ended`.
std::optional<std::string> FindLine(const std::string& text,
                                    const std::string& what, bool ended) {
  size_t from = 0;
  while (from < text.size()) {
    const size_t end = text.find('\n', from);
    if (end == std::string::npos && !ended) return std::nullopt;
    const size_t stop = end == std::string::npos ? text.size() : end;
    absl::string_view line(text.data() + from, stop - from);
    if (absl::StrContains(line, what)) return std::string(line);
    from = stop + 1;
  }
  return std::nullopt;
}

// poll()'s timeout for what is left until `deadline`: -1 for ever, and
// never less than the time left (rounded up to a millisecond).
int PollMilliseconds(absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) return -1;
  const absl::Duration left =
      std::max(deadline - absl::Now(), absl::ZeroDuration());
  return static_cast<int>(std::min<int64_t>(
      absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))),
      INT_MAX));
}

int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Held around each spawn; set once by StopSpawning.
struct SpawnGate {
  hedge::Mutex mu;
  bool stopped ABSL_GUARDED_BY(mu) = false;
};

SpawnGate& Gate() {
  static auto* gate = new SpawnGate;  // never destroyed: used at exit
  return *gate;
}

}  // namespace

void StopSpawning() {
  SpawnGate& gate = Gate();
  hedge::MutexLock lock(&gate.mu);
  gate.stopped = true;
}

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    ChildOptions options) {
  if (options.argv.empty()) {
    return absl::InvalidArgumentError("no program to run");
  }
  StreamActions actions;
  // stdout's actions first: stderr may follow it.
  for (absl::Status status :
       {actions.SetInput(options.stdin_from),
        actions.SetOutput(STDOUT_FILENO, options.stdout_to),
        actions.SetOutput(STDERR_FILENO, options.stderr_to)}) {
    if (!status.ok()) return status;
  }
  std::vector<std::string> args = options.argv;
  std::vector<char*> argv = NullTerminated(args);
  std::vector<std::string> env = ChildEnvironment(options.environment);
  std::vector<char*> envp = NullTerminated(env);
  const ShellLikeSpawnAttr attr;
  pid_t pid = 0;
  int error = 0;
  {
    SpawnGate& gate = Gate();
    hedge::MutexLock lock(&gate.mu);
    if (gate.stopped) {
      return absl::CancelledError(
          absl::StrCat("not started, the process is stopping: ",
                       absl::StrJoin(options.argv, " ")));
    }
    error = posix_spawnp(&pid, argv[0], actions.get(), attr.get(), argv.data(),
                         envp.data());
  }
  actions.CloseWriteEnds();
  if (error != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", absl::StrJoin(options.argv, " "), ": ",
                     std::strerror(error)));
  }
  std::unique_ptr<ChildProcess> child(
      new ChildProcess(pid, PidfdOpen(pid), options.stop_grace));
  for (Stream stream : {Stream::kStdout, Stream::kStderr}) {
    const int fd = actions.ReleaseReadEnd(Index(stream));
    if (fd >= 0) child->StartCapture(stream, fd);
  }
  return child;
}

ChildProcess::ChildProcess(pid_t pid, int pidfd, absl::Duration stop_grace)
    : pid_(pid), pidfd_(pidfd), stop_grace_(stop_grace) {}

ChildProcess::~ChildProcess() {
  Stop();
  for (int index : {0, 1}) {
    if (readers_[index].joinable()) readers_[index].join();
    if (capture_fds_[index] >= 0) close(capture_fds_[index]);
  }
  if (pidfd_ >= 0) close(pidfd_);
}

void ChildProcess::StartCapture(Stream stream, int fd) {
  const int index = Index(stream);
  capture_fds_[index] = fd;
  {
    hedge::MutexLock lock(&mu_);
    ended_[index] = false;
  }
  readers_[index] = std::thread([this, index] { ReadCapture(index); });
}

void ChildProcess::ReadCapture(int index) {
  char buf[4096];
  for (ssize_t n; (n = read(capture_fds_[index], buf, sizeof(buf))) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    hedge::MutexLock lock(&mu_);
    text_[index].append(buf, n);
    changed_.SignalAll();
  }
  hedge::MutexLock lock(&mu_);
  ended_[index] = true;
  changed_.SignalAll();
}

bool ChildProcess::CapturesEnded() const { return ended_[0] && ended_[1]; }

void ChildProcess::Signal(int signal) const {
  if (pidfd_ >= 0) {
    PidfdSignal(pidfd_, signal);  // ESRCH once reaped: the pidfd pins it
    return;
  }
  hedge::MutexLock lock(&mu_);
  if (!exit_code_.has_value()) kill(pid_, signal);
}

std::optional<int> ChildProcess::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    {
      hedge::MutexLock lock(&mu_);
      if (!exit_code_.has_value()) {
        int status = 0;
        const pid_t done = waitpid(pid_, &status, WNOHANG);
        if (done == pid_) {
          exit_code_ = ExitCode(status);
        } else if (done < 0 && errno == ECHILD) {
          exit_code_ = -1;  // reaped by someone else
        }
      }
      if (exit_code_.has_value()) {
        while (!CapturesEnded()) {
          if (changed_.WaitWithDeadline(&mu_, deadline) && !CapturesEnded()) {
            return std::nullopt;
          }
        }
        return exit_code_;
      }
    }
    if (absl::Now() >= deadline) return std::nullopt;
    if (pidfd_ >= 0) {
      // Readable once the child has exited.
      pollfd exited{pidfd_, POLLIN, 0};
      const int ready = poll(&exited, 1, PollMilliseconds(deadline));
      if (ready == 0) return std::nullopt;
    } else {
      absl::SleepFor(std::min(kWaitStep, deadline - absl::Now()));
    }
  }
}

int ChildProcess::Stop(absl::Duration grace) {
  if (std::optional<int> code = Wait(absl::ZeroDuration())) return *code;
  if (grace > absl::ZeroDuration()) {
    Signal(SIGTERM);
    if (std::optional<int> code = Wait(grace)) return *code;
  }
  Signal(SIGKILL);
  return *Wait(absl::InfiniteDuration());
}

std::optional<std::string> ChildProcess::WaitForLine(
    Stream stream, const std::string& text, absl::Duration timeout) const {
  const int index = Index(stream);
  const absl::Time deadline = absl::Now() + timeout;
  hedge::MutexLock lock(&mu_);
  while (true) {
    std::optional<std::string> line =
        FindLine(text_[index], text, ended_[index]);
    if (line.has_value() || ended_[index]) return line;
    if (changed_.WaitWithDeadline(&mu_, deadline)) {
      return FindLine(text_[index], text, ended_[index]);
    }
  }
}

std::string ChildProcess::captured(Stream stream) const {
  hedge::MutexLock lock(&mu_);
  return text_[Index(stream)];
}

ChildOptions LoggedTo(std::vector<std::string> argv,
                      const std::string& log_path) {
  ChildOptions options;
  options.argv = std::move(argv);
  options.stdout_to = Output::AppendTo(log_path);
  options.stderr_to = Output::SameAsStdout();
  return options;
}

absl::StatusOr<ChildResult> RunToExit(ChildOptions options,
                                      absl::Duration timeout) {
  const std::string program = options.argv.empty() ? "" : options.argv[0];
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start(std::move(options));
  if (!child.ok()) return child.status();
  std::optional<int> code = (*child)->Wait(timeout);
  if (!code.has_value()) {
    (*child)->Stop();
    return absl::DeadlineExceededError(absl::StrCat(
        program, " still ran after ", absl::FormatDuration(timeout),
        "; stderr:\n", (*child)->captured(Stream::kStderr)));
  }
  ChildResult result;
  result.exit_code = *code;
  result.stdout_text = (*child)->captured(Stream::kStdout);
  result.stderr_text = (*child)->captured(Stream::kStderr);
  return result;
}

std::string ReadWholeFile(const std::string& path) {
  std::string text;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[16384];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fd);
  return text;
}

bool WaitForPort(int port, absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  while (true) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool open =
        fd >= 0 && connect(fd, reinterpret_cast<const sockaddr*>(&address),
                           sizeof(address)) == 0;
    if (fd >= 0) close(fd);
    if (open) return true;
    if (absl::Now() >= give_up) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
}

}  // namespace tailgate::testing
