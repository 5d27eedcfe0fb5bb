// SidecarSession: one fresh sidecar for one policy, ready to measure: the
// real `tailgate` binary as a child process (tests/process's TailgateProcess:
// loopback port-0 listeners, ports read from its event=listening log
// lines; with SidecarTransport::kUnix the read client's listener is a Unix
// domain socket instead, a fresh path per session, removed when the
// session ends; with SidecarDoor::kRead that listener is the read door,
// --read_listen; with kGrpcFront, --listen is served by the gRPC library
// alone, --listen_front=grpc), a read client and an admin client connected to it, and the
// warm-up done (sequential fast reads, so that the gRPC channel and the
// sidecar's connections to both replicas are open before the first
// measured read).
//
// The warm-up count must be even: the sidecar rotates its primary per
// admitted read, so after an even warm-up the first measured read starts
// on replica A, as it would on a sidecar that had served nothing. Warm-up
// reads are fast on both replicas and never need a hedge, so they leave
// the hedge credit where a fresh sidecar starts it (full, at the burst).
//
// Example:
//   const SidecarSetup setup{binary, replicas->backends(), {}, 50};
//   absl::StatusOr<SidecarStats> metrics = MeasureOnFreshSidecar(
//       setup, policy, [&](SidecarSession& session) {
//         ... measure with session.client() ...
//         return absl::OkStatus();
//       });
//
// Thread safety: Start and Stop from one thread; client(), Stats() and
// Metrics() from any thread while the session runs.

#ifndef TAILGATE_EXPERIMENT_SCENARIOS_SIDECAR_SESSION_H_
#define TAILGATE_EXPERIMENT_SCENARIOS_SIDECAR_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/admin_client.h"
#include "client/client.h"
#include "experiment/config/experiment_config.h"
#include "experiment/config/policies.h"
#include "tests/process/tailgate_process.h"

namespace tailgate::experiment {

// What every fresh sidecar of a run shares.
struct SidecarSetup {
  std::string binary;                    // the tailgate binary
  std::string backends;                  // its --backends
  std::vector<std::string> extra_flags;  // after the policy's flags
  int64_t warmup = 0;                    // REQUIRES: even
  SidecarTransport transport = SidecarTransport::kTcp;  // of the read client
  SidecarDoor door = SidecarDoor::kListen;              // the read client's
};

// Every sidecar the experiment starts is tuned as for a CPU of its own
// (docs/TUNING.md): gRPC's threads SCHED_BATCH and a 100 us spin before a
// due hedge. tailgate's defaults are the ones for a CPU shared with the app.
inline constexpr const char* kDedicatedCpuFlags[] = {"--sched_policy=batch",
                                                     "--timer_spin=100us"};

// The setup every scenario uses: kDedicatedCpuFlags; --warmup,
// --sidecar_transport and --sidecar_cpus from `config`; then the scenario's
// own sidecar flags (the last value of a flag wins).
SidecarSetup SetupFor(const ExperimentConfig& config, std::string binary,
                      std::string backends,
                      std::vector<std::string> extra_flags = {});

class SidecarSession {
 public:
  static absl::StatusOr<std::unique_ptr<SidecarSession>> Start(
      const SidecarSetup& setup, const Policy& policy);

  // Kills the sidecar if Stop was not called; removes its Unix socket.
  ~SidecarSession();

  Client& client() { return *client_; }
  // Another read client on a connection of its own (ClientOptions::
  // own_connection), for a second app sharing the sidecar.
  absl::StatusOr<std::unique_ptr<Client>> ConnectOwnClient() const;
  const testing::TailgateProcess& process() const { return *process_; }
  // Where the read clients connect: the --listen or the read door's
  // address.
  const std::string& read_address() const { return read_address_; }

  // Totals since the sidecar started (Admin.GetStats).
  absl::StatusOr<SidecarStats> Stats() { return admin_->GetStats(); }
  // The Prometheus text (Admin.GetMetrics): the counters Stats() lacks.
  absl::StatusOr<MetricsText> Metrics() { return admin_->GetMetrics(); }

  // Closes the clients, then SIGTERM: the sidecar drains and must exit 0
  // within 10 s. An error carries its stderr.
  absl::Status Stop();

 private:
  SidecarSession(std::string socket_path, std::string read_address,
                 std::unique_ptr<testing::TailgateProcess> process,
                 std::unique_ptr<Client> client,
                 std::unique_ptr<AdminClient> admin)
      : socket_path_(std::move(socket_path)),
        read_address_(std::move(read_address)),
        process_(std::move(process)),
        client_(std::move(client)),
        admin_(std::move(admin)) {}

  std::string socket_path_;   // empty over TCP
  std::string read_address_;  // where the read clients connect
  // Declared before the clients so that it is destroyed after them.
  std::unique_ptr<testing::TailgateProcess> process_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<AdminClient> admin_;
};

// Starts a SidecarSession for `policy`, runs `measure` on it, stops it;
// the sidecar's counters over `measure` alone (see StatsDelta).
absl::StatusOr<SidecarStats> MeasureOnFreshSidecar(
    const SidecarSetup& setup, const Policy& policy,
    absl::FunctionRef<absl::Status(SidecarSession&)> measure);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_SCENARIOS_SIDECAR_SESSION_H_
