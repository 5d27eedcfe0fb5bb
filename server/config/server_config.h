// ServerConfig: the tailgate command line, parsed and validated in one pure
// step.
//
// Example:
//   RawFlags flags;  // the declared defaults
//   flags.backends = "http://10.0.0.7:8080";
//   absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(flags);
//   if (!config.ok()) { print config.status().message(); exit 2; }
// (LoadConfig, config_load.h, is the whole path from the command line
// and the config file.)
//
// Every flag is taken as text and parsed here (flag_values.h), not by
// absl's typed flags, and the config file's numbers as it typed them, so
// that any bad value yields one line naming the flag, such as
//   --hedge_fraction: must be in [0, 1], got 1.5
// This layer checks the syntax of every value and what the server itself
// owns (addresses, drain, logging, CPUs); the engine's limits are checked
// once, by ValidateEngineConfig, whose FieldError names the field that
// ForFlagOfField turns into its flag.
// (absl still rejects unknown flags and malformed booleans itself, with its
// own message and exit code 1).
//
// Thread safety: ConfigFromRawFlags is a pure function (apart from checking
// that --ca_file is readable and that --cpus names CPUs the process may
// use).

#ifndef TAILGATE_SERVER_CONFIG_SERVER_CONFIG_H_
#define TAILGATE_SERVER_CONFIG_SERVER_CONFIG_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hedge/config/engine_config.h"
#include "server/config/health_settings.h"
#include "server/config/raw_value.h"
#include "server/config/schema/settings_schema.h"
#include "server/net/listen_address.h"
#include "server/observability/log.h"
#include "server/process/sched_policy.h"

namespace tailgate::server {

// A replica set from the config file (config_file.h), its numbers as the
// file typed them and the rest as text like the flags'. An empty value
// (nullopt for http2 and coalesce) takes the value of the flag of the same
// name.
struct RawUpstream {
  std::string name;      // "" is the default set
  std::string replicas;  // comma-separated, like --backends
  std::string hedge_delay;
  std::string hedge_delay_min;
  std::string hedge_delay_max;
  RawValue hedge_fraction;
  RawValue hedge_burst;
  RawValue retry_fraction;
  RawValue retry_per_second;
  std::string retry_window;
  RawValue tenant_share;
  RawValue failure_threshold;
  std::string cooldown;
  RawHealth health;
  RawValue preconnect;
  std::optional<bool> http2;
  std::optional<bool> coalesce;
  std::string ca_file;
  // The set's own limits and discovery (empty: the global value, or the
  // default; see config.proto).
  std::string timeout;
  RawValue max_response_bytes;
  RawValue max_requests;
  bool resolve = false;
  std::string refresh_interval;
};

// The settings as given; the member defaults are the flags' defaults, as
// declared (schema/settings_schema.h). LoadConfig (config_load.h) folds
// the config file in.
struct RawFlags {
  std::string config = SettingDefault("config");
  std::string backends = SettingDefault("backends");
  std::string listen = SettingDefault("listen");
  std::string admin = SettingDefault("admin");
  std::string metrics_listen = SettingDefault("metrics_listen");
  std::string hedge_delay = SettingDefault("hedge_delay");  // or "auto"
  std::string hedge_delay_min = SettingDefault("hedge_delay_min");
  std::string hedge_delay_max = SettingDefault("hedge_delay_max");
  RawValue hedge_fraction = SettingDefault("hedge_fraction");
  RawValue hedge_burst = SettingDefault("hedge_burst");
  RawValue retry_fraction = SettingDefault("retry_fraction");
  RawValue retry_per_second = SettingDefault("retry_per_second");
  std::string retry_window = SettingDefault("retry_window");
  RawValue tenant_share = SettingDefault("tenant_share");
  std::string timeout = SettingDefault("timeout");
  RawValue max_requests = SettingDefault("max_requests");
  RawValue max_attempts = SettingDefault("max_attempts");
  // Empty: 2 * max_requests.
  RawValue max_streams_per_connection =
      SettingDefault("max_streams_per_connection");
  RawValue max_response_bytes = SettingDefault("max_response_bytes");
  RawValue max_grpc_memory_bytes = SettingDefault("max_grpc_memory_bytes");
  RawValue max_connections = SettingDefault("max_connections");
  RawValue max_batch_reads = SettingDefault("max_batch_reads");
  RawValue max_buffered_bytes = SettingDefault("max_buffered_bytes");
  std::string send_timeout = SettingDefault("send_timeout");
  RawValue failure_threshold = SettingDefault("failure_threshold");
  std::string cooldown = SettingDefault("cooldown");
  RawHealth health = HealthFlagDefaults();
  std::string drain_timeout = SettingDefault("drain_timeout");
  bool backend_http2 = SettingDefault("backend_http2") == "true";
  bool coalesce = SettingDefault("coalesce") == "true";
  RawValue preconnect = SettingDefault("preconnect");
  std::string timer_spin = SettingDefault("timer_spin");
  std::string ca_file = SettingDefault("ca_file");
  std::string log_format = SettingDefault("log_format");
  std::string cpus = SettingDefault("cpus");
  std::string sched_policy = SettingDefault("sched_policy");
  std::string http_listen = SettingDefault("http_listen");  // empty: off
  RawValue http_max_connections = SettingDefault("http_max_connections");
  std::string http_header_timeout = SettingDefault("http_header_timeout");
  std::string read_listen = SettingDefault("read_listen");  // empty: off
  std::string listen_front = SettingDefault("listen_front");
  std::string unix_socket_mode = SettingDefault("unix_socket_mode");

  // From the config file: its replica sets, in the file's order. The
  // default set ("") is among them if the file has one; --backends on the
  // command line replaces its replicas, or makes it (with the flags'
  // policy) when the file has none.
  std::vector<RawUpstream> upstreams;
  // Where the file set each value taken from it, as "FILE:LINE:COLUMN",
  // by key: the flag's name for a global setting ("timeout"), the field
  // for the default set ("hedge_delay"), "upstreams.NAME.FIELD" for a named
  // set's, and "upstreams.NAME" for the set itself. An error about a value
  // names this place ("sidecar.textproto:7:3: timeout: ...") instead of
  // its flag.
  absl::flat_hash_map<std::string, std::string> file_locations;
};

enum class ListenFront { kLoop, kGrpc };

struct ServerConfig {
  ListenAddress listen;          // gRPC HedgedRead, health, reflection
  ListenAddress admin;           // gRPC Admin
  ListenAddress metrics_listen;  // HTTP /metrics, /healthz, /readyz
  absl::Duration drain_timeout;
  // HTTP/2 MAX_CONCURRENT_STREAMS of the --listen server: calls one client
  // connection may have open at once. It bounds what the gRPC front holds
  // for calls the read service has not seen yet (memory, and the queue in
  // front of admission); a client over it waits on its side.
  int max_streams_per_connection = 256;
  // gRPC's resource quota, shared by the --listen and --admin servers: the
  // memory it may hold for connections, partly received requests and calls.
  int64_t max_grpc_memory_bytes = int64_t{64} << 20;
  // Client connections open at once on --listen (the sidecar lowers it to
  // leave descriptors for replica connections: SplitDescriptors in
  // server/sidecar/connection_limits.h).
  int max_connections = 4096;
  // Reads one ReadMany call may carry.
  int max_batch_reads = 1000;
  // Answers built and not yet sent to their clients, in bytes, at most
  // (ResponseMemory); at least engine.max_response_bytes.
  int64_t max_buffered_bytes = int64_t{64} << 20;
  // How long a built answer may wait for its client to take it.
  absl::Duration send_timeout = absl::Seconds(5);
  LogFormat log_format = LogFormat::kLogfmt;
  // Every thread of the process runs on these CPUs (ascending; main pins
  // them before starting any thread). Empty: no pinning.
  std::vector<int> cpus;
  // The policy of the threads gRPC and the listeners start
  // (sched_policy.h).
  SchedPolicy sched_policy = SchedPolicy::kNormal;
  // Its upstreams: the default set ("") from --backends, and the config
  // file's sets.
  hedge::EngineConfig engine;
  // The plain-HTTP door (server/http_door), when --http_listen is set.
  std::optional<ListenAddress> http_listen;
  int http_max_connections = 1024;
  absl::Duration http_header_timeout = absl::Seconds(10);
  // The read door (server/read_door), when --read_listen is set. It takes
  // --max_streams_per_connection, --max_connections (its own count) and
  // --send_timeout as the --listen server does.
  std::optional<ListenAddress> read_listen;
  // What serves --listen (--listen_front): the read door, on the engine's
  // loop, serving Read, health and reflection itself (kLoop); or the gRPC
  // library's server (kGrpc).
  ListenFront listen_front = ListenFront::kLoop;
  // Permission bits of every unix socket the sidecar creates
  // (--unix_socket_mode); each unix address above carries it too.
  int unix_socket_mode = kDefaultUnixSocketMode;
};

// INVALID_ARGUMENT for the first bad value found, with a message that
// starts with the flag ("--timeout: must be positive, got 0"), or with its
// place in the config file (see RawFlags::file_locations).
absl::StatusOr<ServerConfig> ConfigFromRawFlags(const RawFlags& flags);

// A FieldError from the engine's validation (ValidateEngineConfig, or
// Engine::Create's checks of libcurl) as "--flag: problem" for the flag
// that sets the field; any other status as it is.
absl::Status ForFlagOfField(const absl::Status& status);

// Like ForFlagOfField, but a field whose value came from the config file
// is named by its place there: "sidecar.textproto:12:5:
// upstreams.a.hedge_fraction: must be in [0, 1], got 1.5". A named
// upstream's field the file left to its flag reads "FILE:LINE:COLUMN:
// upstreams.a.hedge_delay (from --hedge_delay): ...".
absl::Status ForSourceOfField(const absl::Status& status,
                              const RawFlags& flags);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_SERVER_CONFIG_H_
