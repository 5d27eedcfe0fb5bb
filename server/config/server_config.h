// ServerConfig: the tailgate command line, parsed and validated in one pure
// step.
//
// Example (main):
//   absl::ParseCommandLine(argc, argv);
//   absl::StatusOr<ServerConfig> config = ConfigFromFlags();
//   if (!config.ok()) { print config.status().message(); exit 2; }
//
// Every flag is taken as text and parsed here (flag_values.h), not by
// absl's typed flags, so that any bad value yields one line naming the
// flag, such as
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
// use). ConfigFromFlags reads
// the process's flags: call it after absl::ParseCommandLine.

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
#include "server/net/listen_address.h"
#include "server/observability/log.h"
#include "server/process/sched_policy.h"

namespace tailgate::server {

// A replica set from the config file (config_file.h), its values as text
// like the flags'. An empty value (nullopt for http2) takes the value of
// the flag of the same name.
struct RawUpstream {
  std::string name;      // "" is the default set
  std::string replicas;  // comma-separated, like --backends
  std::string hedge_delay;
  std::string hedge_delay_min;
  std::string hedge_delay_max;
  std::string hedge_fraction;
  std::string hedge_burst;
  std::string retry_fraction;
  std::string retry_per_second;
  std::string retry_window;
  std::string tenant_share;
  std::string failure_threshold;
  std::string cooldown;
  RawHealth health;
  std::string preconnect;
  std::optional<bool> http2;
  std::string ca_file;
  // The set's own limits and discovery (empty: the global value, or the
  // default; see config.proto).
  std::string timeout;
  std::string max_response_bytes;
  std::string max_requests;
  bool resolve = false;
  std::string refresh_interval;
};

// The flag values as given; the member defaults are the flags' defaults.
// With --config, ApplyConfigFile (config_file.h) has folded the file in.
struct RawFlags {
  std::string config;  // --config: path of the configuration file
  std::string backends;
  std::string listen = "127.0.0.1:8080";
  std::string admin = "127.0.0.1:9090";
  std::string metrics_listen = "127.0.0.1:9464";
  std::string hedge_delay = "25ms";  // or "auto"
  std::string hedge_delay_min = "1ms";
  std::string hedge_delay_max = "200ms";
  std::string hedge_fraction = "0.1";
  std::string hedge_burst = "2";
  std::string retry_fraction = "0.2";
  std::string retry_per_second = "10";
  std::string retry_window = "10s";
  std::string tenant_share = "1";
  std::string timeout = "1s";
  std::string max_requests = "128";
  std::string max_attempts = "160";
  std::string max_streams_per_connection;  // empty: 2 * max_requests
  std::string max_response_bytes = "4194304";
  std::string max_grpc_memory_bytes = "67108864";
  std::string max_connections = "4096";
  std::string max_buffered_bytes = "67108864";
  std::string send_timeout = "5s";
  std::string failure_threshold = "5";
  std::string cooldown = "1s";
  RawHealth health = HealthFlagDefaults();
  std::string drain_timeout = "5s";
  bool backend_http2 = false;
  std::string preconnect = "1";
  std::string timer_spin = "0";
  std::string ca_file;
  std::string log_format = "logfmt";
  std::string cpus = "any";
  std::string sched_policy = "normal";
  std::string http_listen;  // empty: no plain-HTTP door
  std::string http_max_connections = "1024";
  std::string http_header_timeout = "10s";
  std::string read_listen;  // empty: no read door
  std::string listen_front = "loop";

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
  // Client connections open at once on --listen (main lowers it to leave
  // descriptors for replica connections: EffectiveMaxConnections).
  int max_connections = 4096;
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

// The process's --flags, as RawFlags.
RawFlags RawFlagsFromCommandLine();

inline absl::StatusOr<ServerConfig> ConfigFromFlags() {
  return ConfigFromRawFlags(RawFlagsFromCommandLine());
}

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_SERVER_CONFIG_H_
