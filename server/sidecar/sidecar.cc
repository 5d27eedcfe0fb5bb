#include "server/sidecar/sidecar.h"

#include <malloc.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cpus/cpu_set.h"
#include "server/observability/metrics.h"
#include "server/process/file_limit.h"
#include "server/process/sched_policy.h"
#include "server/process/termination_signals.h"
#include "server/sidecar/connection_limits.h"
#include "server/sidecar/liveness.h"
#include "server/sidecar/start_log.h"

namespace tailgate::server {
namespace {

// /healthz's probe of the gRPC door on --listen: how long it may take, and
// how long a result is reused.
constexpr absl::Duration kDoorProbeDeadline = absl::Seconds(2);
constexpr absl::Duration kDoorProbeInterval = absl::Seconds(1);
constexpr absl::Duration kIdleTrimPeriod = absl::Seconds(1);
// How often the stalled-calls thread looks for unsent answers.
constexpr absl::Duration kStalledCallsTick = absl::Seconds(1);

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

// One client connection of the read doors may hold 7/8 of --max_requests
// (rounded up; the rest is kept for the others: a single client rarely
// needs it all, and one that stops reading its answers must not take
// every slot; a limit under 8 has no share of its own, 0) and half of
// --max_buffered_bytes, but always one answer.
int64_t ReadsPerConnection(const ServerConfig& config) {
  const int64_t max = config.engine.admission.max_requests;
  return max / 8 == 0 ? 0 : max - max / 8;
}
// ReadMany reads leave an eighth of --max_requests to Read calls, as one
// connection does (a limit under 8 has no such cap): a 100-key batch still
// runs whole at the default 128.
int64_t BatchReadsInFlight(const ServerConfig& config) {
  return ReadsPerConnection(config);
}
int64_t AnswerBytesPerConnection(const ServerConfig& config) {
  return std::max(config.max_buffered_bytes / 2,
                  config.engine.max_response_bytes);
}

bool Failed(StartFailure& failure, std::string what, absl::Status status) {
  failure = {std::move(what), std::move(status)};
  return false;
}

}  // namespace

Sidecar::Sidecar(const ServerConfig& config, const BuildInfo& build,
                 const ConnectionLimits& connections, Logger& log)
    : started_at_(absl::Now()),
      config_(config),
      build_(build),
      log_(log),
      connections_(connections),
      engine_log_(log),
      response_memory_(config.engine.admission.max_requests,
                       config.max_buffered_bytes,
                       config.engine.max_response_bytes),
      stalled_calls_(config.send_timeout, kStalledCallsTick),
      grpc_quota_("tailgate") {
  log_.Info("connection_limits", {{"listen", connections_.listen},
                                  {"admin", connections_.admin},
                                  {"metrics", connections_.metrics},
                                  {"http", connections_.http},
                                  {"read", connections_.read},
                                  {"reserved", connections_.reserved}});
  rejections_.WatchResponseMemory(&response_memory_);
  grpc_quota_.Resize(static_cast<size_t>(config.max_grpc_memory_bytes));
  // Threads for the library's synchronous handlers (v1alpha reflection
  // with --listen_front=grpc); every other service is callback-based.
  grpc_quota_.SetMaxThreads(kMaxGrpcSyncThreads);
}

std::unique_ptr<Sidecar> Sidecar::Start(const LoadedConfig& loaded,
                                        const BuildInfo& build, Logger& log,
                                        StartFailure& failure) {
  const ServerConfig& config = loaded.config;
  LogStart(log, config, build);
  uint64_t file_limit = 0;  // 0: unknown
  if (absl::StatusOr<FileLimit> files = RaiseFileLimit(); files.ok()) {
    file_limit = files->soft;
    log.Info("file_limit", {{"soft_before", files->before},
                            {"soft", files->soft},
                            {"hard", files->hard}});
  } else {
    log.Warn("file_limit_unchanged", {{"error", files.status().message()}});
  }
  // Before the sidecar's first thread: every thread inherits the CPUs.
  if (!config.cpus.empty()) {
    const absl::Status pinned = PinThisThread(config.cpus);
    if (!pinned.ok()) {
      Failed(failure, "cpus", pinned);
      return nullptr;
    }
  }
  absl::StatusOr<ConnectionLimits> connections =
      SplitDescriptors(config, file_limit);
  if (!connections.ok()) {
    Failed(failure, "file_limit", connections.status());
    return nullptr;
  }
  std::unique_ptr<Sidecar> sidecar(
      new Sidecar(config, build, *connections, log));
  if (!sidecar->StartLoop(failure) || !sidecar->StartEngine(failure)) {
    return nullptr;
  }
  sidecar->StartReload(loaded);
  sidecar->admin_service_.emplace(
      *sidecar->engine_, sidecar->rejections_,
      [s = sidecar.get()] { return s->ReloadCounts(); }, build);
  if (!sidecar->StartListen(failure) || !sidecar->StartAdmin(failure) ||
      !sidecar->StartMetrics(failure) || !sidecar->StartHttpDoor(failure) ||
      !sidecar->StartReadDoor(failure)) {
    return nullptr;
  }
  return sidecar;
}

bool Sidecar::StartLoop(StartFailure& failure) {
  loop_ = std::make_unique<hedge::transport::CurlLoop>(hedge::SteadyClock());
  if (absl::Status started = loop_->Start(); !started.ok()) {
    return Failed(failure, "engine", started);
  }
  return true;
}

bool Sidecar::StartEngine(StartFailure& failure) {
  resolver_ = MakeResolver(log_);
  absl::StatusOr<std::unique_ptr<hedge::Engine>> engine = hedge::Engine::Create(
      config_.engine, *loop_, &engine_log_, resolver_.get());
  if (!engine.ok()) return Failed(failure, "engine", engine.status());
  engine_ = *std::move(engine);
  // The loop thread has started with the process's own policy; gRPC and
  // the HTTP listener start their threads from here on and inherit this.
  if (config_.sched_policy == SchedPolicy::kBatch) {
    if (const absl::Status set = SetThisThreadPolicy(SchedPolicy::kBatch);
        !set.ok()) {
      // A sandbox that forbids it costs throughput, not correctness.
      log_.Warn("sched_policy_unchanged", {{"error", set.message()}});
    }
  }
  // Heap memory a burst of reads freed, and the engine's transfer slots
  // beyond a reserve, go back to the kernel once the reads stop for a
  // second (idle_trim.h).
  idle_trim_ = std::make_unique<IdleTrim>(
      [&engine = *engine_] { return engine.Snapshot().requests; },
      kIdleTrimPeriod,
      [&engine = *engine_] {
        engine.ReleaseIdleMemory();
        malloc_trim(0);
      });
  read_core_.emplace(*engine_, gate_, rejections_, response_memory_,
                     ReadCoreLimits{.timeout = config_.engine.timeout,
                                    .send_timeout = config_.send_timeout});
  read_service_.emplace(*read_core_, stalled_calls_);
  return true;
}

void Sidecar::StartReload(const LoadedConfig& loaded) {
  const RawFlags& command_line = loaded.command_line;
  if (command_line.config.empty()) return;
  reloader_ = std::make_unique<ConfigReloader>(loaded, *engine_, log_);
  absl::StatusOr<std::unique_ptr<ConfigFileWatch>> started =
      ConfigFileWatch::Start(command_line.config, kConfigWatchDebounce, [this] {
        reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
      });
  if (started.ok()) {
    watch_ = *std::move(started);
  } else {
    // SIGHUP still reloads.
    log_.Warn("config_watch_failed", {{"error", started.status().message()}});
  }
}

ReloadSnapshot Sidecar::ReloadCounts() const {
  if (reloader_ != nullptr) return reloader_->Counts();
  // No --config: the flags, applied at start-up, are all there is.
  return ReloadSnapshot{.last_successful = true, .last_success = started_at_};
}

bool Sidecar::StartListen(StartFailure& failure) {
  if (config_.listen_front == ListenFront::kGrpc) {
    absl::StatusOr<GrpcListener> listener = StartGrpcServer(
        config_.listen, {&*read_service_},
        {.max_streams_per_connection = config_.max_streams_per_connection,
         .max_connections = connections_.listen,
         .accept_failed = AcceptFailureLog(log_, "grpc"),
         .refused = ConnectionRefusedLog(log_, "grpc"),
         .quota = &grpc_quota_});
    if (!listener.ok()) return Failed(failure, "listen", listener.status());
    listen_ = *std::move(listener);
    library_health_ = serving_.Subscribe(
        [&server = *listen_.server](bool now) { SetReadServing(server, now); });
  } else {
    // The loop front: every call on the engine's loop, no gRPC server.
    absl::StatusOr<std::unique_ptr<read_door::ReadDoor>> door =
        read_door::ReadDoor::Start(
            {.address = config_.listen,
             .max_connections = connections_.listen,
             .max_streams_per_connection = config_.max_streams_per_connection,
             .send_timeout = config_.send_timeout,
             .max_request_bytes = config_.max_grpc_memory_bytes,
             .max_batch_reads = config_.max_batch_reads,
             .max_reads_per_connection = ReadsPerConnection(config_),
             .max_answer_bytes_per_connection =
                 AnswerBytesPerConnection(config_),
             .max_batch_reads_in_flight = BatchReadsInFlight(config_),
             .accept_failed = AcceptFailureLog(log_, "grpc"),
             .refused = ConnectionRefusedLog(log_, "grpc"),
             .idle_closed = IdleConnectionClosedLog(log_, "grpc"),
             .serving_state = &serving_},
            *read_core_, *loop_);
    if (!door.ok()) return Failed(failure, "listen", door.status());
    listen_door_ = *std::move(door);
    listen_.address = listen_door_->address();
  }
  serving_.Set(true);
  log_.Info("listening",
            {{"service", "grpc"}, {"addr", listen_.address.ToString()}});
  return true;
}

bool Sidecar::StartAdmin(StartFailure& failure) {
  absl::StatusOr<GrpcListener> listener =
      StartGrpcServer(config_.admin, {&*admin_service_},
                      {.max_connections = connections_.admin,
                       .accept_failed = AcceptFailureLog(log_, "admin"),
                       .refused = ConnectionRefusedLog(log_, "admin"),
                       .quota = &grpc_quota_});
  if (!listener.ok()) return Failed(failure, "admin", listener.status());
  admin_ = *std::move(listener);
  SetAdminServing(*admin_.server);
  log_.Info("listening",
            {{"service", "admin"}, {"addr", admin_.address.ToString()}});
  return true;
}

bool Sidecar::StartMetrics(StartFailure& failure) {
  door_probe_.emplace(listen_.address, kDoorProbeDeadline, kDoorProbeInterval);
  absl::StatusOr<std::unique_ptr<HttpEndpoints>> metrics = HttpEndpoints::Start(
      config_.metrics_listen,
      {.metrics =
           [this] {
             return RenderMetrics(engine_->Snapshot(), rejections_.Snapshot(),
                                  ReloadCounts(), build_);
           },
       .ready = [this] { return !gate_.draining(); },
       .live =
           [this] {
             return CheckLiveness(door_probe_->Check(),
                                  read_core_->last_answer(), absl::Now());
           },
       .accept_failed = AcceptFailureLog(log_, "metrics"),
       .connections_closed =
           [this](uint64_t idle_closed, uint64_t refused) {
             log_.Warn("connections_closed_at_limit",
                       {{"listener", "metrics"},
                        {"idle_closed", idle_closed},
                        {"refused", refused}});
           }},
      {.max_connections = connections_.metrics});
  if (!metrics.ok()) return Failed(failure, "metrics_listen", metrics.status());
  metrics_ = *std::move(metrics);
  log_.Info("listening",
            {{"service", "metrics"}, {"addr", metrics_->address().ToString()}});
  return true;
}

bool Sidecar::StartHttpDoor(StartFailure& failure) {
  if (!config_.http_listen.has_value()) return true;
  absl::StatusOr<std::unique_ptr<http_door::HttpDoor>> door =
      http_door::HttpDoor::Start(
          {.address = *config_.http_listen,
           .max_connections = connections_.http,
           .header_timeout = config_.http_header_timeout,
           .send_timeout = config_.send_timeout,
           .accept_failed = AcceptFailureLog(log_, "http"),
           .refused = ConnectionRefusedLog(log_, "http"),
           .idle_closed = IdleConnectionClosedLog(log_, "http")},
          *read_core_, *loop_);
  if (!door.ok()) return Failed(failure, "http_listen", door.status());
  http_door_ = *std::move(door);
  log_.Info("listening",
            {{"service", "http"}, {"addr", http_door_->address().ToString()}});
  return true;
}

bool Sidecar::StartReadDoor(StartFailure& failure) {
  if (!config_.read_listen.has_value()) return true;
  absl::StatusOr<std::unique_ptr<read_door::ReadDoor>> door =
      read_door::ReadDoor::Start(
          {.address = *config_.read_listen,
           .max_connections = connections_.read,
           .max_streams_per_connection = config_.max_streams_per_connection,
           .send_timeout = config_.send_timeout,
           .max_request_bytes = config_.max_grpc_memory_bytes,
           .max_batch_reads = config_.max_batch_reads,
           .max_reads_per_connection = ReadsPerConnection(config_),
           .max_answer_bytes_per_connection = AnswerBytesPerConnection(config_),
           .max_batch_reads_in_flight = BatchReadsInFlight(config_),
           .accept_failed = AcceptFailureLog(log_, "read"),
           .refused = ConnectionRefusedLog(log_, "read"),
           .idle_closed = IdleConnectionClosedLog(log_, "read")},
          *read_core_, *loop_);
  if (!door.ok()) return Failed(failure, "read_listen", door.status());
  read_door_ = *std::move(door);
  log_.Info("listening",
            {{"service", "read"}, {"addr", read_door_->address().ToString()}});
  return true;
}

void Sidecar::ServeUntilSignal() {
  const int signal = AwaitTerminationSignal([this] {
    if (reloader_ == nullptr) {
      log_.Info("sighup_ignored", {{"reason", "no --config file to reload"}});
      return;
    }
    reloader_->Reload(ConfigReloader::Trigger::kSignal);
  });
  ExitOnNextTerminationSignal();
  watch_.reset();  // no reload during the drain
  // Refuse and flip readiness first: once drain_start is logged, probes see
  // the drain.
  gate_.StartDrain();
  serving_.Set(false);
  log_.Info("drain_start", {{"signal", signal == SIGINT ? "SIGINT" : "SIGTERM"},
                            {"in_flight", gate_.in_flight()},
                            {"drain_timeout", config_.drain_timeout}});
  const int64_t left = gate_.WaitForIdle(config_.drain_timeout);
  log_.Info("drain_end", {{"in_flight", left}});
}

}  // namespace tailgate::server
