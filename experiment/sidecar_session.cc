#include "experiment/sidecar_session.h"

#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"
#include "experiment/closed_loop.h"
#include "experiment/progress.h"
#include "experiment/report.h"
#include "experiment/workload.h"

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kConnectTimeout = absl::Seconds(5);

}  // namespace

absl::StatusOr<std::unique_ptr<SidecarSession>> SidecarSession::Start(
    const std::string& binary, const std::string& backends,
    const Policy& policy, const std::vector<std::string>& extra_flags,
    int64_t warmup) {
  assert(warmup % 2 == 0);
  std::vector<std::string> flags = policy.flags;
  flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
  absl::StatusOr<std::unique_ptr<SidecarProcess>> process =
      SidecarProcess::Start(binary, backends, flags);
  if (!process.ok()) return process.status();

  ClientOptions options;
  options.connect_timeout = kConnectTimeout;
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Connect((*process)->grpc_address(), options);
  if (!client.ok()) return client.status();
  absl::StatusOr<std::unique_ptr<AdminClient>> admin =
      AdminClient::Connect((*process)->admin_address(), options);
  if (!admin.ok()) return admin.status();

  Progress progress(absl::StrCat(policy.mode, " warm-up"), warmup);
  absl::StatusOr<std::vector<absl::Duration>> warm = RunSequentialReads(
      **client, warmup, [](int64_t n) { return WarmupPath(n); }, progress);
  if (!warm.ok()) return warm.status();
  return std::unique_ptr<SidecarSession>(new SidecarSession(
      *std::move(process), *std::move(client), *std::move(admin)));
}

absl::Status SidecarSession::Stop() {
  client_.reset();
  admin_.reset();
  return process_->Stop();
}

absl::StatusOr<SidecarStats> MeasureOnFreshSidecar(
    const SidecarSetup& setup, const Policy& policy,
    absl::FunctionRef<absl::Status(SidecarSession&)> measure) {
  absl::StatusOr<std::unique_ptr<SidecarSession>> session =
      SidecarSession::Start(setup.binary, setup.backends, policy,
                            setup.extra_flags, setup.warmup);
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
