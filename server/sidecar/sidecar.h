// Sidecar: the parts of a running tailgate, owned by one object whose
// members are declared in the order they start, so that they stop in the
// reverse order by construction: the engine outlives every door that
// submits to it, the read core outlives the doors and services that use
// it, each listener outlives nothing that depends on it.
//
//   Start            raises the descriptor limit and splits it between
//                    the listeners, pins to --cpus, starts the loop thread
//                    (which inherits the CPUs and the process's scheduling
//                    policy), the engine on it, the read core, the gRPC
//                    services, the config reloader and watch (with --config),
//                    then the listeners: --listen (the loop front, or the gRPC
//                    library's server with --listen_front=grpc), --admin,
//                    --metrics_listen, and --http_listen and --read_listen
//                    when set; each bound address is logged
//                    (event=listening), so port 0 can be discovered.
//   ServeUntilSignal serves until SIGTERM or SIGINT (SIGHUP reloads the
//                    --config file), then drains: readiness and health go
//                    to not serving, new reads are refused with
//                    UNAVAILABLE, and reads in flight get up to
//                    --drain_timeout to finish.
//   destruction      stops everything in reverse start order: each front
//                    ends its open calls with a status and cancels reads
//                    left, before the engine completes what it still has
//                    and gives the loop back; the loop thread stops last.
//
// The loop thread is the sidecar's: it lends it to the engine (which
// drives its transfers and timers there) and to the doors (which serve
// their connections there), so a read on the loop front or the HTTP door
// never changes thread.
//
// Thread safety: Start, ServeUntilSignal and the destructor from the
// main thread, one after another; the parts run their own threads.

#ifndef TAILGATE_SERVER_SIDECAR_SIDECAR_H_
#define TAILGATE_SERVER_SIDECAR_SIDECAR_H_

#include <grpcpp/resource_quota.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "hedge/discovery/resolver.h"
#include "hedge/transport/curl/curl_loop.h"
#include "hedge/transport/engine.h"
#include "server/config/config_load.h"
#include "server/config/config_reload.h"
#include "server/config/config_watch.h"
#include "server/config/server_config.h"
#include "server/grpc/admin_service.h"
#include "server/grpc/door_probe.h"
#include "server/grpc/grpc_server.h"
#include "server/grpc/read_service.h"
#include "server/http_door/http_door.h"
#include "server/observability/engine_log.h"
#include "server/observability/http_endpoints.h"
#include "server/observability/log.h"
#include "server/process/idle_trim.h"
#include "server/read/drain.h"
#include "server/read/read_call.h"
#include "server/read/rejections.h"
#include "server/read/response_memory.h"
#include "server/read/stalled_calls.h"
#include "server/read_door/read_door.h"
#include "server/services/serving_state.h"
#include "server/sidecar/connection_limits.h"
#include "server/version/build_info.h"

namespace tailgate::server {

// What failed to start: `what` names the part ("engine", "listen",
// "admin"...), `status` says why.
struct StartFailure {
  std::string what;
  absl::Status status;
};

class Sidecar {
 public:
  // Starts every part, in order, with `loaded.config` (LoadConfigAtStartUp;
  // with --config, reloads start from `loaded`); `build` is the version
  // the start line and tailgate_build_info show. `loaded` and `log` must
  // outlive the sidecar. On failure, what had started is stopped again and
  // the failure names the part.
  static std::unique_ptr<Sidecar> Start(const LoadedConfig& loaded,
                                        const BuildInfo& build, Logger& log,
                                        StartFailure& failure);

  Sidecar(const Sidecar&) = delete;
  Sidecar& operator=(const Sidecar&) = delete;
  ~Sidecar() = default;

  // Serves until a termination signal, then drains (see above). Returns
  // once the drain has ended: the sidecar is then destroyed.
  void ServeUntilSignal();

 private:
  Sidecar(const ServerConfig& config, const BuildInfo& build,
          const ConnectionLimits& connections, Logger& log);

  // Each starts one part; an error names the part in `failure`.
  bool StartLoop(StartFailure& failure);
  bool StartEngine(StartFailure& failure);
  void StartReload(const LoadedConfig& loaded);
  bool StartListen(StartFailure& failure);
  bool StartAdmin(StartFailure& failure);
  bool StartMetrics(StartFailure& failure);
  bool StartHttpDoor(StartFailure& failure);
  bool StartReadDoor(StartFailure& failure);
  ReloadSnapshot ReloadCounts() const;

  // Logs event=stop when it goes, after every other member.
  struct StopLine {
    Logger& log;
    ~StopLine() { log.Info("stop", {}); }
  };

  // Members in start-up order: destroyed in the reverse order.
  const absl::Time started_at_;  // the configuration's time without --config
  const ServerConfig& config_;
  const BuildInfo build_;
  Logger& log_;
  StopLine stop_line_{log_};
  const ConnectionLimits connections_;
  EngineLog engine_log_;
  std::unique_ptr<hedge::discovery::Resolver> resolver_;
  // The process's loop thread, lent to the engine and the doors.
  std::unique_ptr<hedge::transport::CurlLoop> loop_;
  std::unique_ptr<hedge::Engine> engine_;
  DrainGate gate_;
  Rejections rejections_;
  ResponseMemory response_memory_;
  StalledCalls stalled_calls_;
  // Reads the engine's figures and trims it once reads stop for a second.
  std::unique_ptr<IdleTrim> idle_trim_;
  // Every door's reads go through this one core (server/read/read_call.h).
  std::optional<ReadCore> read_core_;
  std::optional<ReadService> read_service_;
  // With --config: reloads on SIGHUP and when the file changes.
  std::unique_ptr<ConfigReloader> reloader_;
  std::unique_ptr<ConfigFileWatch> watch_;
  std::optional<AdminService> admin_service_;
  // One quota for both gRPC listeners: what a client can make the library
  // hold is bounded whichever it uses.
  grpc::ResourceQuota grpc_quota_;
  // Whether reads are served: what every health service on --listen says.
  services::ServingState serving_{false};
  // --listen: the loop front (listen_door_, whose address listen_ holds),
  // or the gRPC library's server in listen_.
  std::unique_ptr<read_door::ReadDoor> listen_door_;
  GrpcListener listen_;
  services::ServingState::Subscription library_health_;
  GrpcListener admin_;
  // Liveness asks the --listen door itself, over a new connection.
  std::optional<DoorProbe> door_probe_;
  std::unique_ptr<HttpEndpoints> metrics_;
  std::unique_ptr<http_door::HttpDoor> http_door_;
  std::unique_ptr<read_door::ReadDoor> read_door_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_SIDECAR_SIDECAR_H_
