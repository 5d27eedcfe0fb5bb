// SidecarSession: one fresh sidecar for one policy, ready to measure: the
// child process, a read client and an admin client connected to it, and
// the warm-up done (sequential fast reads, so that the gRPC channel and
// the sidecar's connections to both replicas are open before the first
// measured read).
//
// The warm-up count must be even: the sidecar rotates its primary per
// admitted read, so after an even warm-up the first measured read starts
// on replica A, as it would on a sidecar that had served nothing. Warm-up
// reads are fast on both replicas and never need a hedge, so they leave
// the hedge credit where a fresh sidecar starts it (full, at the burst).
//
// Example:
//   auto session = SidecarSession::Start(binary, replicas->backends(),
//                                        policy, {}, /*warmup=*/50);
//   absl::StatusOr<SidecarStats> before = (*session)->Stats();
//   ... measure with (*session)->client() ...
//   absl::Status stopped = (*session)->Stop();
//
// Thread safety: Start and Stop from one thread; client() and Stats() from
// any thread while the session runs.

#ifndef TAILGATE_EXPERIMENT_SIDECAR_SESSION_H_
#define TAILGATE_EXPERIMENT_SIDECAR_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/admin_client.h"
#include "client/client.h"
#include "experiment/policies.h"
#include "experiment/sidecar_process.h"

namespace tailgate::experiment {

class SidecarSession {
 public:
  // `extra_flags` go after the policy's own flags.
  // REQUIRES: warmup is even.
  static absl::StatusOr<std::unique_ptr<SidecarSession>> Start(
      const std::string& binary, const std::string& backends,
      const Policy& policy, const std::vector<std::string>& extra_flags,
      int64_t warmup);

  Client& client() { return *client_; }
  SidecarProcess& process() { return *process_; }

  // Totals since the sidecar started (Admin.GetStats).
  absl::StatusOr<SidecarStats> Stats() { return admin_->GetStats(); }

  // Closes the clients and stops the sidecar (see SidecarProcess::Stop).
  absl::Status Stop();

 private:
  SidecarSession(std::unique_ptr<SidecarProcess> process,
                 std::unique_ptr<Client> client,
                 std::unique_ptr<AdminClient> admin)
      : process_(std::move(process)),
        client_(std::move(client)),
        admin_(std::move(admin)) {}

  // Declared first so that it is destroyed last, after its clients.
  std::unique_ptr<SidecarProcess> process_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<AdminClient> admin_;
};

// What every fresh sidecar of a run shares.
struct SidecarSetup {
  std::string binary;
  std::string backends;
  std::vector<std::string> extra_flags;  // after the policy's flags
  int64_t warmup = 0;                    // REQUIRES: even
};

// Starts a SidecarSession for `policy`, runs `measure` on it, stops it;
// the sidecar's counters over `measure` alone (see StatsDelta).
absl::StatusOr<SidecarStats> MeasureOnFreshSidecar(
    const SidecarSetup& setup, const Policy& policy,
    absl::FunctionRef<absl::Status(SidecarSession&)> measure);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_SIDECAR_SESSION_H_
