// tailgate: the hedged-read sidecar.
//
// Start-up: flags and the --config file (a bad value prints one line
// naming the flag, or the file, line and field, and exits 2), the engine,
// the gRPC listeners (--listen: HedgedRead, health, reflection; --admin:
// Admin), the HTTP listener (--metrics_listen), the
// plain-HTTP door when --http_listen is set (server/http_door), the read
// door when --read_listen is set (server/read_door). Each
// bound address is logged (event=listening), so port 0 can be discovered.
//
// Reload: with --config, SIGHUP and a change of the file (its directory is
// watched) re-read it and apply its upstreams (server/config/config_reload.h).
//
// Shutdown: on SIGTERM or SIGINT, readiness and health go to not serving,
// new reads are refused with UNAVAILABLE, and reads in flight get up to
// --drain_timeout to finish; then everything stops and the process exits 0.
// A second signal exits at once with 128 + signal (143 / 130). Failing to
// start (pinning to --cpus, the engine or a listener) exits 1.

#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "cpus/cpu_set.h"
#include "hedge/discovery/resolver.h"
#include "hedge/transport/engine.h"
#include "server/config/config_file.h"
#include "server/config/config_reload.h"
#include "server/config/config_watch.h"
#include "server/config/server_config.h"
#include "server/grpc/admin_service.h"
#include "server/grpc/door_probe.h"
#include "server/grpc/grpc_server.h"
#include "server/grpc/read_service.h"
#include "server/http_door/http_door.h"
#include "server/observability/circuit_log.h"
#include "server/observability/http_endpoints.h"
#include "server/observability/library_logs.h"
#include "server/observability/log.h"
#include "server/observability/metrics.h"
#include "server/process/file_limit.h"
#include "server/process/idle_trim.h"
#include "server/process/sched_policy.h"
#include "server/process/termination_signals.h"
#include "server/read/drain.h"
#include "server/read/read_call.h"
#include "server/read/rejections.h"
#include "server/read/response_memory.h"
#include "server/read/stalled_calls.h"
#include "server/read_door/read_door.h"
#include "server/services/serving_state.h"

namespace tailgate::server {
namespace {

std::string Backends(const hedge::UpstreamConfig& upstream) {
  std::vector<std::string> backends;
  for (const hygiene::ReplicaUrl& replica : upstream.replicas) {
    backends.push_back(replica.configured);
  }
  return absl::StrJoin(backends, ",");
}

// "25ms", or "auto" with its bounds: "auto(1ms..200ms)".
std::string HedgeDelayText(const hedge::UpstreamConfig& upstream) {
  if (!upstream.adaptive_delay.enabled) {
    return absl::FormatDuration(upstream.hedge_delay);
  }
  return absl::StrCat("auto(", absl::FormatDuration(upstream.adaptive_delay.min),
                      "..", absl::FormatDuration(upstream.adaptive_delay.max),
                      ")");
}

// The start line shows the first replica set's policy (the only one
// without --config); with more than one, each has an event=upstream line.
void LogStart(Logger& log, const ServerConfig& config) {
  const hedge::UpstreamConfig& upstream = config.engine.upstreams[0];
  log.Info(
      "start",
      {{"backends", Backends(upstream)},
       {"hedge_delay", HedgeDelayText(upstream)},
       {"hedge_fraction", upstream.budget.fraction},
       {"hedge_burst", upstream.budget.burst},
       {"retry_fraction", upstream.retry.fraction},
       {"retry_per_second", upstream.retry.per_second},
       {"retry_window", upstream.retry.window},
       {"tenant_share", config.engine.tenant_share},
       {"timeout", config.engine.timeout},
       {"max_requests", config.engine.admission.max_requests},
       {"max_streams_per_connection", config.max_streams_per_connection},
       {"max_attempts", config.engine.admission.max_attempts},
       {"max_response_bytes", config.engine.max_response_bytes},
       {"failure_threshold", upstream.circuit.failure_threshold},
       {"cooldown", upstream.circuit.cooldown},
       {"ejection_failure_rate", upstream.circuit.failure_rate},
       {"ejection_min_requests", upstream.circuit.min_requests},
       {"ejection_window", upstream.circuit.window},
       {"max_ejection_time", upstream.circuit.max_ejection_time},
       {"probe_successes", upstream.circuit.probe_successes},
       {"ramp_up", upstream.circuit.ramp_up},
       {"max_ejected_share", upstream.circuit.max_ejected_share},
       {"give_up_factor", upstream.give_up.factor},
       {"give_up_min", upstream.give_up.min},
       {"give_up_max", upstream.give_up.max},
       {"probe_path", upstream.probe_path},
       {"probe_method", upstream.probe_head ? "HEAD" : "GET"},
       {"preconnect", upstream.preconnect},
       {"timer_spin", config.engine.timer_spin},
       {"drain_timeout", config.drain_timeout},
       {"backend_http2", upstream.http_version == hedge::HttpVersion::kHttp2},
       {"cpus",
        config.cpus.empty() ? std::string("any") : FormatCpuList(config.cpus)},
       {"sched_policy", SchedPolicyName(config.sched_policy)},
       {"upstreams", config.engine.upstreams.size()}});
  if (config.engine.upstreams.size() < 2) return;
  for (const hedge::UpstreamConfig& set : config.engine.upstreams) {
    log.Info("upstream", {{"name", set.name},
                          {"backends", Backends(set)},
                          {"hedge_delay", HedgeDelayText(set)},
                          {"hedge_fraction", set.budget.fraction},
                          {"hedge_burst", set.budget.burst},
                          {"retry_fraction", set.retry.fraction},
                          {"retry_per_second", set.retry.per_second},
                          {"retry_window", set.retry.window},
                          {"tenant_share", set.tenant_share},
                          {"failure_threshold", set.circuit.failure_threshold},
                          {"cooldown", set.circuit.cooldown},
                          {"ejection_failure_rate", set.circuit.failure_rate},
                          {"ejection_min_requests", set.circuit.min_requests},
                          {"ejection_window", set.circuit.window},
                          {"max_ejection_time", set.circuit.max_ejection_time},
                          {"probe_successes", set.circuit.probe_successes},
                          {"ramp_up", set.circuit.ramp_up},
                          {"max_ejected_share", set.circuit.max_ejected_share},
                          {"give_up_factor", set.give_up.factor},
                          {"give_up_min", set.give_up.min},
                          {"give_up_max", set.give_up.max},
                          {"probe_path", set.probe_path},
                          {"probe_method", set.probe_head ? "HEAD" : "GET"},
                          {"preconnect", set.preconnect},
                          {"backend_http2",
                           set.http_version == hedge::HttpVersion::kHttp2}});
  }
}

// /healthz's probe of the gRPC door on --listen: how long it may take, and how
// long a result is reused.
constexpr absl::Duration kDoorProbeDeadline = absl::Seconds(2);
constexpr absl::Duration kDoorProbeInterval = absl::Seconds(1);
constexpr absl::Duration kIdleTrimPeriod = absl::Seconds(1);

// One warning per pause of a listener whose accept() failed.
AcceptBackoff::Report AcceptFailureLog(const Logger& log,
                                       absl::string_view listener) {
  return [&log, listener = std::string(listener)](int error,
                                                  uint64_t failures) {
    log.Warn("accept_failed", {{"listener", listener},
                               {"error", strerror(error)},
                               {"failures", failures},
                               {"pause", absl::Seconds(1)}});
  };
}

// Client connections each listener may have open, out of the descriptors
// the process may use: what replica connections and the process itself
// need is set aside first.
struct ConnectionLimits {
  int listen = 0;
  int admin = 0;
  int http = 0;
  int read = 0;  // the read door's, out of --max_connections
  int64_t reserved = 0;
};

ConnectionLimits SplitDescriptors(const ServerConfig& config,
                                  uint64_t file_limit) {
  constexpr int kAdminConnections = 64;
  // Replica connections (one per attempt, plus warm ones: --preconnect
  // per replica), and the process's own (listeners, event loops, libraries:
  // about 32 when idle, measured).
  ConnectionLimits limits;
  limits.reserved = config.engine.admission.max_attempts + 96;
  for (const hedge::UpstreamConfig& upstream : config.engine.upstreams) {
    limits.reserved += static_cast<int64_t>(upstream.preconnect) *
                       static_cast<int64_t>(upstream.replicas.size());
  }
  const int64_t left =
      file_limit == 0 ? std::numeric_limits<int64_t>::max()
                      : static_cast<int64_t>(file_limit) - limits.reserved -
                            kAdminConnections;
  limits.admin = kAdminConnections;
  limits.http = config.http_listen.has_value()
                    ? static_cast<int>(std::clamp<int64_t>(
                          std::min<int64_t>(config.http_max_connections,
                                            left / 2),
                          1, config.http_max_connections))
                    : 0;
  // With the read door, --listen and the door share what is left.
  const int64_t grpc_left = config.read_listen.has_value()
                                ? (left - limits.http) / 2
                                : left - limits.http;
  const auto bounded = [&config](int64_t connections) {
    return static_cast<int>(std::clamp<int64_t>(
        std::min<int64_t>(config.max_connections, connections), 1,
        config.max_connections));
  };
  limits.listen = bounded(grpc_left);
  limits.read = config.read_listen.has_value() ? bounded(grpc_left) : 0;
  return limits;
}

// One warning at the 1st, 10th, 100th... connection closed at accept.
std::function<void(uint64_t)> ConnectionRefusedLog(const Logger& log,
                                                   absl::string_view listener) {
  return [&log, listener = std::string(listener)](uint64_t refused) {
    uint64_t power = 1;
    while (power < refused) power *= 10;
    if (power != refused) return;
    log.Warn("connections_refused",
             {{"listener", listener}, {"refused", refused}});
  };
}

// Logs a start-up failure; the exit code for it.
int Fatal(Logger& log, absl::string_view what, const absl::Status& status) {
  log.Error("fatal", {{"what", what}, {"error", status.message()}});
  return 1;
}

// The resolver of `resolve` replicas' names: the system's, unless the
// testing seam (discovery::kTestingHostsFileVariable) names a hosts file.
std::unique_ptr<hedge::discovery::Resolver> MakeResolver(const Logger& log) {
  const char* hosts = getenv(hedge::discovery::kTestingHostsFileVariable);
  if (hosts == nullptr || hosts[0] == '\0') {
    return std::make_unique<hedge::discovery::SystemResolver>();
  }
  log.Warn("testing_hosts_file",
           {{"path", hosts},
            {"reason", absl::StrCat(hedge::discovery::kTestingHostsFileVariable,
                                    " is set: names resolve from this file "
                                    "only (a testing seam)")}});
  return std::make_unique<hedge::discovery::HostsFileResolver>(hosts);
}

// The loop front on --listen: the read door, serving Read, health (as
// `serving` says) and reflection on the engine's loop; no gRPC server.
// `door` is set on success; the listener's address is the door's (it has
// no server or acceptor).
absl::StatusOr<GrpcListener> StartLoopFront(
    const ServerConfig& config, const GrpcServerLimits& limits,
    ReadCore& core, services::ServingState& serving,
    std::unique_ptr<read_door::ReadDoor>& door) {
  absl::StatusOr<std::unique_ptr<read_door::ReadDoor>> started =
      read_door::ReadDoor::Start(
          {.address = config.listen,
           .max_connections = limits.max_connections,
           .max_streams_per_connection = config.max_streams_per_connection,
           .send_timeout = config.send_timeout,
           .max_request_bytes = config.max_grpc_memory_bytes,
           .accept_failed = limits.accept_failed,
           .refused = limits.refused,
           .serving_state = &serving},
          core);
  if (!started.ok()) return started.status();
  door = *std::move(started);
  GrpcListener listener;
  listener.address = door->address();
  return listener;
}

int Run(const ServerConfig& config, const RawFlags& command_line,
        const OnCommandLine& on_command_line) {
  Logger log(config.log_format);
  // Before the first gRPC object: nothing a client sends reaches the log
  // unescaped, and the libraries' lines are rate-limited.
  RouteLibraryLogs(log);
  LogStart(log, config);
  uint64_t file_limit = 0;
  if (absl::StatusOr<FileLimit> files = RaiseFileLimit(); files.ok()) {
    file_limit = files->soft;
    log.Info("file_limit", {{"soft_before", files->before},
                            {"soft", files->soft},
                            {"hard", files->hard}});
  } else {
    log.Warn("file_limit_unchanged", {{"error", files.status().message()}});
  }
  const ConnectionLimits connections = SplitDescriptors(config, file_limit);
  log.Info("connection_limits", {{"listen", connections.listen},
                                 {"admin", connections.admin},
                                 {"http", connections.http},
                                 {"read", connections.read},
                                 {"reserved", connections.reserved}});
  // Still the only thread: every thread started from here on inherits it.
  if (!config.cpus.empty()) {
    const absl::Status pinned = PinThisThread(config.cpus);
    if (!pinned.ok()) return Fatal(log, "cpus", pinned);
  }

  CircuitLog circuit_log(log);
  const std::unique_ptr<hedge::discovery::Resolver> resolver =
      MakeResolver(log);
  absl::StatusOr<std::unique_ptr<hedge::Engine>> engine = hedge::Engine::Create(
      config.engine, hedge::SteadyClock(), &circuit_log, resolver.get());
  if (!engine.ok()) return Fatal(log, "engine", engine.status());
  // The engine loop has started with the process's own policy; gRPC and
  // the HTTP listener start their threads from here on and inherit this.
  if (config.sched_policy == SchedPolicy::kBatch) {
    if (const absl::Status set = SetThisThreadPolicy(SchedPolicy::kBatch);
        !set.ok()) {
      // A sandbox that forbids it costs throughput, not correctness.
      log.Warn("sched_policy_unchanged", {{"error", set.message()}});
    }
  }

  DrainGate gate;
  Rejections rejections;
  ResponseMemory response_memory(config.engine.admission.max_requests,
                                 config.max_buffered_bytes,
                                 config.engine.max_response_bytes);
  rejections.WatchResponseMemory(&response_memory);
  StalledCalls stalled_calls(config.send_timeout, absl::Seconds(1));
  // Heap memory a burst of reads freed, and the engine's transfer slots
  // beyond a reserve, go back to the kernel once the reads stop for a
  // second (idle_trim.h).
  // Reads the engine: stopped before the engine goes (below).
  auto idle_trim = std::make_unique<IdleTrim>(
      [&engine = **engine] { return engine.Snapshot().requests; },
      kIdleTrimPeriod,
      [&engine = **engine] {
        engine.ReleaseIdleMemory();
        malloc_trim(0);
      });
  // Every door's reads go through this one core (server/read/read_call.h).
  ReadCore read_core(**engine, gate, rejections, response_memory,
                     {.timeout = config.engine.timeout,
                      .send_timeout = config.send_timeout});
  ReadService read_service(read_core, stalled_calls);
  // With --config: reloads on SIGHUP and when the file changes.
  std::unique_ptr<ConfigReloader> reloader;
  std::unique_ptr<ConfigFileWatch> watch;
  if (!command_line.config.empty()) {
    reloader = std::make_unique<ConfigReloader>(command_line, on_command_line,
                                                config, **engine, log);
    absl::StatusOr<std::unique_ptr<ConfigFileWatch>> started =
        ConfigFileWatch::Start(command_line.config, kConfigWatchDebounce,
                               [&reloader] {
                                 reloader->Reload(
                                     ConfigReloader::Trigger::kFileChanged);
                               });
    if (started.ok()) {
      watch = *std::move(started);
    } else {
      // SIGHUP still reloads.
      log.Warn("config_watch_failed", {{"error", started.status().message()}});
    }
  }
  const auto reload_counts = [&reloader] {
    return reloader != nullptr ? reloader->Counts() : ReloadSnapshot();
  };
  AdminService admin_service(**engine, rejections, reload_counts);

  // One quota for both listeners: what a client can make gRPC hold is
  // bounded whichever door it uses. Threads: for the library's synchronous
  // handlers (v1alpha reflection); every other service is callback-based.
  grpc::ResourceQuota grpc_quota("tailgate");
  grpc_quota.Resize(static_cast<size_t>(config.max_grpc_memory_bytes));
  grpc_quota.SetMaxThreads(kMaxGrpcSyncThreads);
  const GrpcServerLimits listen_limits{
      .max_streams_per_connection = config.max_streams_per_connection,
      .max_connections = connections.listen,
      .accept_failed = AcceptFailureLog(log, "grpc"),
      .refused = ConnectionRefusedLog(log, "grpc"),
      .quota = &grpc_quota};
  // Whether reads are served: what every health service on --listen says.
  services::ServingState serving(false);
  // The loop front on --listen: every call on the engine's loop, no gRPC
  // server; or the gRPC library's server (--listen_front=grpc).
  std::unique_ptr<read_door::ReadDoor> listen_door;
  absl::StatusOr<GrpcListener> reads;
  if (config.listen_front == ListenFront::kGrpc) {
    reads = StartGrpcServer(config.listen, {&read_service}, listen_limits);
  } else {
    reads = StartLoopFront(config, listen_limits, read_core, serving,
                           listen_door);
  }
  if (!reads.ok()) return Fatal(log, "listen", reads.status());
  services::ServingState::Subscription library_health;
  if (reads->server != nullptr) {
    library_health = serving.Subscribe(
        [&server = *reads->server](bool now) { SetReadServing(server, now); });
  }
  serving.Set(true);
  log.Info("listening",
           {{"service", "grpc"}, {"addr", reads->address.ToString()}});

  absl::StatusOr<GrpcListener> admin =
      StartGrpcServer(config.admin, {&admin_service},
                      {.max_connections = connections.admin,
                       .accept_failed = AcceptFailureLog(log, "admin"),
                       .refused = ConnectionRefusedLog(log, "admin"),
                       .quota = &grpc_quota});
  if (!admin.ok()) return Fatal(log, "admin", admin.status());
  SetAdminServing(*admin->server);
  log.Info("listening",
           {{"service", "admin"}, {"addr", admin->address.ToString()}});

  const hedge::Engine& engine_ref = **engine;
  // Liveness asks the --listen door itself, over a new connection.
  DoorProbe door_probe(reads->address, kDoorProbeDeadline,
                       kDoorProbeInterval);
  absl::StatusOr<std::unique_ptr<HttpEndpoints>> http = HttpEndpoints::Start(
      config.metrics_listen,
      {.metrics =
           [&engine_ref, &rejections, &reload_counts] {
             return RenderMetrics(engine_ref.Snapshot(), rejections.Snapshot(),
                                  reload_counts());
           },
       .ready = [&gate] { return !gate.draining(); },
       .live = [&door_probe] { return door_probe.Check(); },
       .accept_failed = AcceptFailureLog(log, "metrics")});
  if (!http.ok()) return Fatal(log, "metrics_listen", http.status());
  log.Info("listening",
           {{"service", "metrics"}, {"addr", (*http)->address().ToString()}});

  // The plain-HTTP door: the same admission steps and engine as HedgedRead.
  std::unique_ptr<http_door::HttpDoor> http_door;
  if (config.http_listen.has_value()) {
    absl::StatusOr<std::unique_ptr<http_door::HttpDoor>> door =
        http_door::HttpDoor::Start(
            {.address = *config.http_listen,
             .max_connections = connections.http,
             .header_timeout = config.http_header_timeout,
             .accept_failed = AcceptFailureLog(log, "http")},
            read_core);
    if (!door.ok()) return Fatal(log, "http_listen", door.status());
    http_door = *std::move(door);
    log.Info("listening",
             {{"service", "http"}, {"addr", http_door->address().ToString()}});
  }

  // The read door: HedgedRead.Read on the engine's loop thread.
  std::unique_ptr<read_door::ReadDoor> read_door;
  if (config.read_listen.has_value()) {
    absl::StatusOr<std::unique_ptr<read_door::ReadDoor>> door =
        read_door::ReadDoor::Start(
            {.address = *config.read_listen,
             .max_connections = connections.read,
             .max_streams_per_connection = config.max_streams_per_connection,
             .send_timeout = config.send_timeout,
             .max_request_bytes = config.max_grpc_memory_bytes,
             .accept_failed = AcceptFailureLog(log, "read"),
             .refused = ConnectionRefusedLog(log, "read")},
            read_core);
    if (!door.ok()) return Fatal(log, "read_listen", door.status());
    read_door = *std::move(door);
    log.Info("listening",
             {{"service", "read"}, {"addr", read_door->address().ToString()}});
  }

  const int signal = AwaitTerminationSignal([&log, &reloader] {
    if (reloader == nullptr) {
      log.Info("sighup_ignored", {{"reason", "no --config file to reload"}});
      return;
    }
    reloader->Reload(ConfigReloader::Trigger::kSignal);
  });
  ExitOnNextTerminationSignal();
  watch.reset();  // no reload during the drain
  // Refuse and flip readiness first: once drain_start is logged, probes see
  // the drain.
  gate.StartDrain();
  serving.Set(false);
  log.Info("drain_start", {{"signal", signal == SIGINT ? "SIGINT" : "SIGTERM"},
                           {"in_flight", gate.in_flight()},
                           {"drain_timeout", config.drain_timeout}});
  const int64_t left = gate.WaitForIdle(config.drain_timeout);
  log.Info("drain_end", {{"in_flight", left}});

  // Calls still running are cancelled now; Shutdown returns once each has
  // completed through the engine, which must therefore still be alive.
  const auto now = absl::ToChronoTime(absl::Now());
  reads->acceptor.reset();  // no new connections from here on
  admin->acceptor.reset();
  // Each front ends its open streams with a status and cancels the reads
  // left, before the engine goes.
  listen_door.reset();
  if (reads->server != nullptr) reads->server->Shutdown(now);
  admin->server->Shutdown(now);
  read_door.reset();  // cancels what is left, before the engine goes
  http_door.reset();
  http->reset();
  idle_trim.reset();  // its thread reads the engine
  engine->reset();
  log.Info("stop", {});
  return 0;
}

}  // namespace
}  // namespace tailgate::server

int main(int argc, char** argv) {
  // Before any thread exists, so that every thread inherits the mask.
  tailgate::server::BlockTerminationSignals();
  // Debian's abseil is built with mutex deadlock detection on, which keeps
  // a lock graph on every contended absl::Mutex (gRPC's mutexes among
  // them): measurable CPU per read, and no use in production.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::SetProgramUsageMessage(
      "Hedged HTTP reads as a gRPC sidecar.\n"
      "  tailgate --backends=http://10.0.0.7:8080,http://10.0.0.8:8080\n"
      "  tailgate --config=/etc/tailgate/sidecar.textproto\n"
      "With --config, SIGHUP or a change of the file reloads its upstreams "
      "(replicas and their policy) without dropping a read; listeners and "
      "global limits need a restart.");
  // --help lists the flags, which are defined beside their parser.
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server/config/server_config.cc");
  };
  absl::SetFlagsUsageConfig(usage);
  // Which flags the command line names, before absl consumes argv.
  const tailgate::server::OnCommandLine on_command_line =
      tailgate::server::FlagsNamedIn(argc, argv);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 1) {
    fprintf(stderr, "unexpected argument \"%s\" (every setting is a --flag)\n",
            args[1]);
    return 2;
  }
  // The --config file under the flags given on the command line.
  const tailgate::server::RawFlags command_line =
      tailgate::server::RawFlagsFromCommandLine();
  absl::StatusOr<tailgate::server::RawFlags> flags =
      tailgate::server::ApplyConfigFile(command_line, on_command_line);
  if (!flags.ok()) {
    fprintf(stderr, "%s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<tailgate::server::ServerConfig> config =
      tailgate::server::ConfigFromRawFlags(*flags);
  if (!config.ok()) {
    fprintf(stderr, "%s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  // What only the engine knows (whether this libcurl can speak h2c), as a
  // bad value like any other, before anything starts or logs.
  if (absl::Status engine =
          tailgate::hedge::Engine::CheckConfig(config->engine);
      !engine.ok()) {
    fprintf(stderr, "%s\n",
            std::string(
                tailgate::server::ForSourceOfField(engine, *flags).message())
                .c_str());
    return 2;
  }
  return tailgate::server::Run(*config, command_line, on_command_line);
}
