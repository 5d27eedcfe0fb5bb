#include "experiment/child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/e2e/shell_like_spawn.h"

extern char** environ;

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kStopGrace = absl::Seconds(2);
constexpr absl::Duration kWaitStep = absl::Milliseconds(5);

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::vector<std::string>& argv, const std::string& output_path) {
  if (argv.empty()) return absl::InvalidArgumentError("no program to run");
  std::vector<std::string> args = argv;
  std::vector<char*> pointers;
  for (std::string& arg : args) pointers.push_back(arg.data());
  pointers.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const testing::ShellLikeSpawnAttr attr;
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, args[0].c_str(), &actions, attr.get(),
                                 pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", absl::StrJoin(argv, " "), ": ",
                     std::strerror(error)));
  }
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid));
}

ChildProcess::~ChildProcess() { Stop(); }

std::optional<int> ChildProcess::Wait(absl::Duration timeout) {
  if (exit_code_.has_value()) return exit_code_;
  const absl::Time give_up = absl::Now() + timeout;
  while (true) {
    int status = 0;
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_ || (done < 0 && errno == ECHILD)) {
      exit_code_ = WIFEXITED(status)     ? WEXITSTATUS(status)
                   : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                         : -1;
      return exit_code_;
    }
    if (absl::Now() >= give_up) return std::nullopt;
    absl::SleepFor(kWaitStep);
  }
}

int ChildProcess::Stop() {
  if (exit_code_.has_value()) return *exit_code_;
  kill(pid_, SIGTERM);
  if (std::optional<int> code = Wait(kStopGrace)) return *code;
  kill(pid_, SIGKILL);
  return *Wait(absl::InfiniteDuration());
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool WaitForPort(int port, absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  const sockaddr_in address = Loopback(port);
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

absl::StatusOr<int> UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  sockaddr_in address = Loopback(0);
  socklen_t length = sizeof(address);
  const bool ok =
      bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  close(fd);
  if (!ok) return absl::InternalError("cannot bind a loopback port");
  return ntohs(address.sin_port);
}

}  // namespace tailgate::experiment
