#include "experiment/scenarios/sidecar_session.h"

#include <signal.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cassert>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "cpus/cpu_set.h"
#include "experiment/config/workload.h"
#include "experiment/load/closed_loop.h"
#include "experiment/load/progress.h"
#include "experiment/report/report.h"

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kConnectTimeout = absl::Seconds(5);
constexpr absl::Duration kStopTimeout = absl::Seconds(10);

// A path no other session of any process uses: in $TMPDIR, or in /tmp when
// $TMPDIR is unset or too long for a socket address (a Bazel test's is),
// named by this process's id and a per-process counter.
absl::StatusOr<std::string> FreshSocketPath() {
  static std::atomic<int> sessions{0};
  constexpr size_t kMaxPath = sizeof(sockaddr_un{}.sun_path) - 1;
  const std::string name = absl::StrCat("/tailgate-experiment-", getpid(), "-",
                                        sessions.fetch_add(1), ".sock");
  const char* dir = std::getenv("TMPDIR");
  if (dir != nullptr && *dir != '\0') {
    std::string path = absl::StrCat(dir, name);
    if (path.size() <= kMaxPath) return path;
  }
  std::string path = absl::StrCat("/tmp", name);
  if (path.size() > kMaxPath) {  // not with a pid_t and an int
    return absl::InternalError(absl::StrCat(
        "the socket path ", path, " is longer than ", kMaxPath, " bytes"));
  }
  return path;
}

}  // namespace

SidecarSetup SetupFor(const ExperimentConfig& config, std::string binary,
                      std::string backends,
                      std::vector<std::string> extra_flags) {
  std::vector<std::string> flags(std::begin(kDedicatedCpuFlags),
                                 std::end(kDedicatedCpuFlags));
  if (!config.sidecar_cpus.empty()) {
    flags.push_back(
        absl::StrCat("--cpus=", server::FormatCpuList(config.sidecar_cpus)));
  }
  flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
  return SidecarSetup{std::move(binary),        std::move(backends),
                      std::move(flags),         config.warmup,
                      config.sidecar_transport, config.sidecar_door};
}

SidecarSession::~SidecarSession() {
  client_.reset();
  admin_.reset();
  process_.reset();
  if (!socket_path_.empty()) unlink(socket_path_.c_str());
}

absl::StatusOr<std::unique_ptr<SidecarSession>> SidecarSession::Start(
    const SidecarSetup& setup, const Policy& policy) {
  assert(setup.warmup % 2 == 0);
  std::vector<std::string> flags = {"--backends=" + setup.backends};
  flags.insert(flags.end(), policy.flags.begin(), policy.flags.end());
  flags.insert(flags.end(), setup.extra_flags.begin(), setup.extra_flags.end());
  std::string socket_path;
  const bool read_door = setup.door == SidecarDoor::kRead;
  if (setup.door == SidecarDoor::kGrpcFront) {
    flags.push_back("--listen_front=grpc");
  }
  if (setup.transport == SidecarTransport::kUnix) {
    absl::StatusOr<std::string> path = FreshSocketPath();
    if (!path.ok()) return path.status();
    socket_path = *std::move(path);
    // After the loopback default, which it overrides (the last one wins).
    flags.push_back(absl::StrCat(read_door ? "--read_listen" : "--listen",
                                 "=unix:", socket_path));
  } else if (read_door) {
    flags.push_back("--read_listen=127.0.0.1:0");
  }
  // Until the session owns the path.
  absl::Cleanup remove_socket = [&socket_path] {
    if (!socket_path.empty()) unlink(socket_path.c_str());
  };
  absl::StatusOr<std::unique_ptr<testing::TailgateProcess>> process =
      testing::TailgateProcess::Start(setup.binary, flags);
  if (!process.ok()) return process.status();
  std::string read_address = (*process)->grpc_address();
  if (read_door) {
    absl::StatusOr<std::string> address = (*process)->ListeningAddress("read");
    if (!address.ok()) return address.status();
    read_address = *std::move(address);
  }

  ClientOptions options;
  options.connect_timeout = kConnectTimeout;
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Connect(read_address, options);
  if (!client.ok()) return client.status();
  absl::StatusOr<std::unique_ptr<AdminClient>> admin =
      AdminClient::Connect((*process)->admin_address(), options);
  if (!admin.ok()) return admin.status();

  Progress progress(absl::StrCat(policy.mode, " warm-up"), setup.warmup);
  absl::StatusOr<std::vector<SequentialRead>> warm = RunSequentialReads(
      **client, setup.warmup, [](int64_t n) { return WarmupPath(n); },
      progress);
  if (!warm.ok()) return warm.status();
  std::move(remove_socket).Cancel();
  return std::unique_ptr<SidecarSession>(new SidecarSession(
      std::move(socket_path), std::move(read_address), *std::move(process),
      *std::move(client), *std::move(admin)));
}

absl::StatusOr<std::unique_ptr<Client>> SidecarSession::ConnectOwnClient()
    const {
  ClientOptions options;
  options.connect_timeout = kConnectTimeout;
  options.own_connection = true;
  return Client::Connect(read_address_, options);
}

absl::Status SidecarSession::Stop() {
  client_.reset();
  admin_.reset();
  process_->Signal(SIGTERM);
  const std::optional<int> code = process_->WaitForExit(kStopTimeout);
  if (!code.has_value()) {
    return absl::DeadlineExceededError(absl::StrCat(
        "the sidecar did not stop within ", absl::FormatDuration(kStopTimeout),
        "; its stderr:\n", process_->stderr_text()));
  }
  if (*code != 0) {
    return absl::InternalError(absl::StrCat("the sidecar exited with ", *code,
                                            "; its stderr:\n",
                                            process_->stderr_text()));
  }
  return absl::OkStatus();
}

absl::StatusOr<SidecarStats> MeasureOnFreshSidecar(
    const SidecarSetup& setup, const Policy& policy,
    absl::FunctionRef<absl::Status(SidecarSession&)> measure) {
  absl::StatusOr<std::unique_ptr<SidecarSession>> session =
      SidecarSession::Start(setup, policy);
  if (!session.ok()) return session.status();
  absl::StatusOr<SidecarStats> before = (*session)->Stats();
  if (!before.ok()) return before.status();
  absl::Status measured = measure(**session);
  if (!measured.ok()) return measured;
  absl::StatusOr<SidecarStats> after = (*session)->Stats();
  if (!after.ok()) return after.status();
  absl::Status stopped = (*session)->Stop();
  if (!stopped.ok()) return stopped;
  return StatsDelta(*before, *after);
}

}  // namespace tailgate::experiment
