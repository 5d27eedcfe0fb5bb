#include "server/config/server_config.h"

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cpus/cpu_set.h"
#include "flags/flag_values.h"
#include "hedge/errors/field_error.h"
#include "hedge/hygiene/replica_url.h"
#include "server/config/flag_reader.h"
#include "server/config/health_settings.h"

ABSL_FLAG(std::string, config, tailgate::server::RawFlags().config,
          "Configuration file, protobuf text format (schema and example: "
          "proto/tailgate/v1/config.proto, docs/sidecar.textproto): "
          "listeners, global limits and named upstreams, each with its own "
          "replicas and policy. These flags, when given on the command "
          "line, override the file's values: --listen, --admin, "
          "--metrics_listen, --http_listen, --read_listen, --listen_front, "
          "--timeout, "
          "--max_requests, "
          "--max_attempts, --max_response_bytes, --max_buffered_bytes, "
          "--max_streams_per_connection, --max_grpc_memory_bytes, "
          "--max_connections, --send_timeout, --drain_timeout, "
          "--tenant_share; and --backends replaces the replicas of the "
          "default set (upstream \"\"). --hedge_delay, --hedge_delay_min, "
          "--hedge_delay_max, --hedge_fraction, --hedge_burst, "
          "--retry_fraction, --retry_per_second, --retry_window, "
          "--tenant_share (its hedge part), "
          "--failure_threshold, --cooldown, --ejection_failure_rate, "
          "--ejection_min_requests, --ejection_window, --max_ejection_time, "
          "--probe_successes, --ramp_up, --max_ejected_share, "
          "--give_up_factor, --give_up_min, --give_up_max, --probe_path, "
          "--probe_method, --preconnect, --backend_http2 "
          "and --ca_file are the defaults of upstreams that leave them out. "
          "Reload: SIGHUP, or a change of the file (its directory is "
          "watched), re-reads it and swaps the upstreams (replicas, policy, "
          "per-upstream limits) without dropping a read; a bad file is "
          "rejected and logged, the running one stays. Listeners and global "
          "limits need a restart (a reload that changes them logs "
          "event=config_reload_needs_restart).");
ABSL_FLAG(std::string, backends, tailgate::server::RawFlags().backends,
          "Comma-separated replica URLs of the default replica set, e.g. "
          "http://10.0.0.7:8080,http://10.0.0.8:8080; dns://NAME:PORT "
          "stands for every address NAME resolves to, looked up every 5s "
          "(required without "
          "--config).");
ABSL_FLAG(std::string, listen, tailgate::server::RawFlags().listen,
          "gRPC address for HedgedRead, health and reflection: host:port, "
          "[ipv6]:port or unix:/path. Port 0 picks a free port (logged).");
ABSL_FLAG(std::string, admin, tailgate::server::RawFlags().admin,
          "gRPC address for the Admin service (host:port or unix:/path).");
ABSL_FLAG(std::string, metrics_listen,
          tailgate::server::RawFlags().metrics_listen,
          "HTTP address (host:port) for /metrics, /healthz and /readyz.");
ABSL_FLAG(std::string, hedge_delay, tailgate::server::RawFlags().hedge_delay,
          "Wait this long for the primary before hedging (> 0, < --timeout), "
          "or auto: learn it per upstream from its primaries' latencies "
          "(max of their (1 - 0.9 * hedge_fraction)-quantile and 1.25 times "
          "their median, over the last 4 s), within --hedge_delay_min and "
          "--hedge_delay_max; 25ms until 50 primaries have been seen.");
ABSL_FLAG(std::string, hedge_delay_min,
          tailgate::server::RawFlags().hedge_delay_min,
          "With --hedge_delay=auto: the least the learned delay may be (> 0).");
ABSL_FLAG(std::string, hedge_delay_max,
          tailgate::server::RawFlags().hedge_delay_max,
          "With --hedge_delay=auto: the most the learned delay may be "
          "(>= --hedge_delay_min, < --timeout).");
ABSL_FLAG(std::string, hedge_fraction,
          tailgate::server::RawFlags().hedge_fraction,
          "Hedge credit earned per admitted read, in [0, 1]; 0 disables "
          "timer hedges (failure fallbacks have --retry_fraction).");
ABSL_FLAG(std::string, hedge_burst, tailgate::server::RawFlags().hedge_burst,
          "Cap on (and starting balance of) hedge credits.");
ABSL_FLAG(std::string, retry_fraction,
          tailgate::server::RawFlags().retry_fraction,
          "Failure-fallback credit each admitted read deposits for "
          "--retry_window, in [0, 1]. Fallbacks have this budget of their "
          "own, apart from the hedge credits.");
ABSL_FLAG(std::string, retry_per_second,
          tailgate::server::RawFlags().retry_per_second,
          "Fallbacks per second allowed on top of --retry_fraction, in [0, "
          "1e6]: per_second * window credits are always there. With "
          "--retry_fraction=0 too, no fallback is taken.");
ABSL_FLAG(std::string, retry_window, tailgate::server::RawFlags().retry_window,
          "The sliding window of the retry budget (100ms to 1h): deposits "
          "and fallbacks count for this long.");
ABSL_FLAG(std::string, tenant_share, tailgate::server::RawFlags().tenant_share,
          "The share, in (0, 1], of --max_requests one tenant "
          "(ReadRequest.tenant, HTTP Tailgate-Tenant) may hold at once, and "
          "of an upstream's hedge credits (burst and earnings) it may "
          "spend; 1 (default) sets no per-tenant limit.");
ABSL_FLAG(std::string, timeout, tailgate::server::RawFlags().timeout,
          "Cap on every read's deadline.");
ABSL_FLAG(std::string, max_requests, tailgate::server::RawFlags().max_requests,
          "Reads in flight at once; more are refused with RESOURCE_EXHAUSTED.");
ABSL_FLAG(std::string, max_attempts, tailgate::server::RawFlags().max_attempts,
          "Upstream attempts in flight at once.");
ABSL_FLAG(std::string, max_streams_per_connection,
          tailgate::server::RawFlags().max_streams_per_connection,
          "Calls one client connection may have open at once on --listen "
          "(HTTP/2 MAX_CONCURRENT_STREAMS); a client over it waits on its "
          "side. Default: 2 * --max_requests.");
ABSL_FLAG(std::string, max_response_bytes,
          tailgate::server::RawFlags().max_response_bytes,
          "Largest response body accepted, in bytes (at most 64 MiB).");
ABSL_FLAG(std::string, max_grpc_memory_bytes,
          tailgate::server::RawFlags().max_grpc_memory_bytes,
          "Memory gRPC may hold for client connections and calls on --listen "
          "and --admin together (buffers, partly received requests), in "
          "bytes; over it, gRPC resets the streams holding the most.");
ABSL_FLAG(std::string, max_connections,
          tailgate::server::RawFlags().max_connections,
          "Client connections open at once on --listen (1 to 1000000); one "
          "more is closed at accept. Lowered at start, if need be, to leave "
          "descriptors for replica connections (logged).");
ABSL_FLAG(std::string, max_buffered_bytes,
          tailgate::server::RawFlags().max_buffered_bytes,
          "Bytes of answers built and not yet taken by their clients, in all; "
          "at the cap, new reads are refused with RESOURCE_EXHAUSTED. At "
          "least --max_response_bytes.");
ABSL_FLAG(std::string, send_timeout, tailgate::server::RawFlags().send_timeout,
          "How long a built answer may wait for its client to take it; then "
          "the call is cancelled and the answer dropped.");
ABSL_FLAG(std::string, failure_threshold,
          tailgate::server::RawFlags().failure_threshold,
          "Consecutive failures that eject a replica (open its circuit).");
ABSL_FLAG(std::string, cooldown, tailgate::server::RawFlags().cooldown,
          "How long a replica's first ejection lasts before it is probed; "
          "each ejection in a row doubles it, up to --max_ejection_time.");
ABSL_FLAG(std::string, drain_timeout,
          tailgate::server::RawFlags().drain_timeout,
          "On SIGTERM/SIGINT, wait this long for reads in flight (>= 0).");
ABSL_FLAG(bool, backend_http2, tailgate::server::RawFlags().backend_http2,
          "Talk HTTP/2 to the replicas (prior knowledge for http://, ALPN "
          "for https://) instead of HTTP/1.1.");
ABSL_FLAG(std::string, preconnect, tailgate::server::RawFlags().preconnect,
          "TCP connections kept open ahead of need to each replica address "
          "(0 to 16), so an attempt - often the hedge - need not wait for a "
          "handshake; 0 disables.");
ABSL_FLAG(std::string, timer_spin, tailgate::server::RawFlags().timer_spin,
          "Wake this long before a hedge is due and spin until it is (0 to "
          "1ms), instead of paying an idle CPU's wake-up on the hedge. "
          "Costs up to this much CPU per timer that fires; for a sidecar "
          "with a CPU of its own (docs/TUNING.md). 0 (default) disables.");
ABSL_FLAG(std::string, ca_file, tailgate::server::RawFlags().ca_file,
          "PEM CA bundle for https replicas; empty uses the system CAs.");
ABSL_FLAG(std::string, log_format, tailgate::server::RawFlags().log_format,
          "Lifecycle log lines on stderr: logfmt or json.");
ABSL_FLAG(std::string, cpus, tailgate::server::RawFlags().cpus,
          "Run every thread on these CPUs: any (wherever the process may), "
          "last (the highest-numbered CPU it may use), or a list such as 1 "
          "or 0-1,3. One CPU keeps a read's hand-offs between threads on "
          "it, at the cost of using one core at most.");
ABSL_FLAG(std::string, sched_policy, tailgate::server::RawFlags().sched_policy,
          "Linux scheduling policy of the threads gRPC and the listeners "
          "start: normal (default: leave the policy the process started "
          "with) or batch (SCHED_BATCH: a thread the engine loop wakes does "
          "not preempt it, which saves a context switch per answer on a CPU "
          "the sidecar has to itself; docs/TUNING.md). The engine loop keeps "
          "the process's policy either way.");

ABSL_FLAG(std::string, http_listen, tailgate::server::RawFlags().http_listen,
          "Plain-HTTP door: GET/HEAD /path?query is a read of that target "
          "(host:port, [ipv6]:port or unix:/path). Empty (default): off.");
ABSL_FLAG(std::string, read_listen, tailgate::server::RawFlags().read_listen,
          "gRPC HedgedRead.Read alone, served on the engine's loop thread "
          "(HTTP/2 cleartext, host:port, [ipv6]:port or unix:/path): the same "
          "reads as --listen at less CPU per read; no health or reflection "
          "there. Empty (default): off.");
ABSL_FLAG(std::string, listen_front, tailgate::server::RawFlags().listen_front,
          "What serves --listen: loop (default) serves every call "
          "(HedgedRead.Read, health, reflection) on the engine's loop thread "
          "with its own HTTP/2; grpc leaves the whole port to the gRPC "
          "library's server (more CPU and latency per read).");
ABSL_FLAG(std::string, http_max_connections,
          tailgate::server::RawFlags().http_max_connections,
          "Open connections the HTTP door keeps at once (1 to 1000000); one "
          "more is closed at accept.");
ABSL_FLAG(std::string, http_header_timeout,
          tailgate::server::RawFlags().http_header_timeout,
          "HTTP door: time a client has to send a complete request, from "
          "connecting or from the end of the previous answer (> 0).");

namespace tailgate::server {
namespace {

void CheckDistinct(FlagReader& reader, absl::string_view flag,
                   const ListenAddress& address, absl::string_view other_flag,
                   const ListenAddress& other) {
  const bool ephemeral = !address.is_unix && address.port == 0;
  if (!ephemeral && address == other) {
    reader.Fail(flag, absl::StrCat("same address as --", other_flag, " (",
                                   address.ToString(), ")"));
  }
}

// The engine configuration's fields that a flag sets, by field.
constexpr std::pair<absl::string_view, absl::string_view> kFlagOfField[] = {
    {"upstreams", "backends"},
    {"replicas", "backends"},
    {"hedge_delay", "hedge_delay"},
    {"hedge_delay_min", "hedge_delay_min"},
    {"hedge_delay_max", "hedge_delay_max"},
    {"hedge_fraction", "hedge_fraction"},
    {"hedge_burst", "hedge_burst"},
    {"retry_fraction", "retry_fraction"},
    {"retry_per_second", "retry_per_second"},
    {"retry_window", "retry_window"},
    {"tenant_share", "tenant_share"},
    {"timeout", "timeout"},
    {"max_requests", "max_requests"},
    {"max_attempts", "max_attempts"},
    {"max_response_bytes", "max_response_bytes"},
    {"failure_threshold", "failure_threshold"},
    {"cooldown", "cooldown"},
    {"ejection_failure_rate", "ejection_failure_rate"},
    {"ejection_min_requests", "ejection_min_requests"},
    {"ejection_window", "ejection_window"},
    {"max_ejection_time", "max_ejection_time"},
    {"probe_successes", "probe_successes"},
    {"ramp_up", "ramp_up"},
    {"max_ejected_share", "max_ejected_share"},
    {"give_up_factor", "give_up_factor"},
    {"give_up_min", "give_up_min"},
    {"give_up_max", "give_up_max"},
    {"probe_path", "probe_path"},
    {"http_version", "backend_http2"},
    {"preconnect", "preconnect"},
    {"timer_spin", "timer_spin"},
};

// The flag that sets `field` (kFlagOfField), with a named upstream's
// "upstreams.NAME." prefix ignored; "" when no flag does.
absl::string_view FlagOfField(absl::string_view field) {
  if (absl::ConsumePrefix(&field, "upstreams.")) {
    const size_t dot = field.rfind('.');
    if (dot == absl::string_view::npos) return "";
    field.remove_prefix(dot + 1);
  }
  for (const auto& [known, flag] : kFlagOfField) {
    if (known == field) return flag;
  }
  return "";
}

// A hedge delay as text: "auto" turns the adaptive delay on (the fixed
// delay keeps its value, unused); a duration turns it off.
void SetHedgeDelay(FlagReader& reader, absl::string_view key,
                   const std::string& text, hedge::UpstreamConfig& upstream) {
  upstream.adaptive_delay.enabled = text == "auto";
  if (!upstream.adaptive_delay.enabled) {
    upstream.hedge_delay = reader.Duration(key, text);
  }
}

// The policy of a replica set that sets none of its own: the flags'.
// Parsed by a reader of its own, so that an error names the flag even
// when the default set in the file sets the field of the same key.
hedge::UpstreamConfig UpstreamDefaults(FlagReader& reader,
                                       const RawFlags& flags) {
  FlagReader flag_only(nullptr);
  hedge::UpstreamConfig upstream;
  SetHedgeDelay(flag_only, "hedge_delay", flags.hedge_delay, upstream);
  upstream.adaptive_delay.min =
      flag_only.Duration("hedge_delay_min", flags.hedge_delay_min);
  upstream.adaptive_delay.max =
      flag_only.Duration("hedge_delay_max", flags.hedge_delay_max);
  upstream.budget.fraction =
      flag_only.Number("hedge_fraction", flags.hedge_fraction);
  upstream.budget.burst = flag_only.Number("hedge_burst", flags.hedge_burst);
  upstream.retry.fraction =
      flag_only.Number("retry_fraction", flags.retry_fraction);
  upstream.retry.per_second =
      flag_only.Number("retry_per_second", flags.retry_per_second);
  upstream.retry.window =
      flag_only.Duration("retry_window", flags.retry_window);
  upstream.tenant_share = flag_only.Number("tenant_share", flags.tenant_share);
  upstream.circuit.failure_threshold =
      flag_only.Int("failure_threshold", flags.failure_threshold);
  upstream.circuit.cooldown = flag_only.Duration("cooldown", flags.cooldown);
  ApplyHealth(flag_only, "", flags.health, upstream);
  upstream.http_version = flags.backend_http2 ? hedge::HttpVersion::kHttp2
                                              : hedge::HttpVersion::kHttp1;
  upstream.ca_file = flags.ca_file;
  upstream.preconnect = flag_only.Int("preconnect", flags.preconnect);
  reader.Adopt(flag_only.status());
  return upstream;
}

// One replica set: `raw`'s own values over `defaults`. `replicas_key`
// names where its replicas came from; `max_ejection_time_given`, whether
// --max_ejection_time was.
hedge::UpstreamConfig UpstreamFromRaw(FlagReader& reader,
                                      const hedge::UpstreamConfig& defaults,
                                      const RawUpstream& raw,
                                      absl::string_view replicas_key,
                                      bool max_ejection_time_given) {
  const std::string prefix =
      raw.name.empty() ? "" : absl::StrCat("upstreams.", raw.name, ".");
  const auto key = [&prefix](absl::string_view field) {
    return absl::StrCat(prefix, field);
  };
  hedge::UpstreamConfig upstream = defaults;
  upstream.name = raw.name;
  upstream.replicas =
      reader.Take(replicas_key, hygiene::ParseReplicaList(raw.replicas),
                  std::vector<hygiene::ReplicaUrl>());
  if (!raw.hedge_delay.empty()) {
    SetHedgeDelay(reader, key("hedge_delay"), raw.hedge_delay, upstream);
  }
  if (!raw.hedge_delay_min.empty()) {
    upstream.adaptive_delay.min =
        reader.Duration(key("hedge_delay_min"), raw.hedge_delay_min);
  }
  if (!raw.hedge_delay_max.empty()) {
    upstream.adaptive_delay.max =
        reader.Duration(key("hedge_delay_max"), raw.hedge_delay_max);
  }
  if (!raw.hedge_fraction.empty()) {
    upstream.budget.fraction =
        reader.Number(key("hedge_fraction"), raw.hedge_fraction);
  }
  if (!raw.hedge_burst.empty()) {
    upstream.budget.burst = reader.Number(key("hedge_burst"), raw.hedge_burst);
  }
  if (!raw.retry_fraction.empty()) {
    upstream.retry.fraction =
        reader.Number(key("retry_fraction"), raw.retry_fraction);
  }
  if (!raw.retry_per_second.empty()) {
    upstream.retry.per_second =
        reader.Number(key("retry_per_second"), raw.retry_per_second);
  }
  if (!raw.retry_window.empty()) {
    upstream.retry.window =
        reader.Duration(key("retry_window"), raw.retry_window);
  }
  if (!raw.tenant_share.empty()) {
    upstream.tenant_share =
        reader.Number(key("tenant_share"), raw.tenant_share);
  }
  if (!raw.failure_threshold.empty()) {
    upstream.circuit.failure_threshold =
        reader.Int(key("failure_threshold"), raw.failure_threshold);
  }
  if (!raw.cooldown.empty()) {
    upstream.circuit.cooldown = reader.Duration(key("cooldown"), raw.cooldown);
  }
  ApplyHealth(reader, prefix, raw.health, upstream);
  if (!max_ejection_time_given && raw.health.max_ejection_time.empty()) {
    upstream.circuit.max_ejection_time =
        DefaultMaxEjectionTime(upstream.circuit.cooldown);
  }
  if (!raw.preconnect.empty()) {
    upstream.preconnect = reader.Int(key("preconnect"), raw.preconnect);
  }
  if (raw.http2.has_value()) {
    upstream.http_version =
        *raw.http2 ? hedge::HttpVersion::kHttp2 : hedge::HttpVersion::kHttp1;
  }
  if (!raw.timeout.empty()) {
    upstream.timeout = reader.Duration(key("timeout"), raw.timeout);
  }
  if (!raw.max_response_bytes.empty()) {
    upstream.max_response_bytes =
        reader.Integer(key("max_response_bytes"), raw.max_response_bytes);
  }
  if (!raw.max_requests.empty()) {
    upstream.max_requests =
        reader.Integer(key("max_requests"), raw.max_requests);
  }
  if (raw.resolve) {
    for (hygiene::ReplicaUrl& replica : upstream.replicas) {
      replica.resolve = true;
    }
  }
  if (!raw.refresh_interval.empty()) {
    upstream.refresh_interval =
        reader.Duration(key("refresh_interval"), raw.refresh_interval);
  }
  if (!raw.ca_file.empty()) {
    upstream.ca_file = raw.ca_file;
    if (access(raw.ca_file.c_str(), R_OK) != 0) {
      reader.Fail(key("ca_file"),
                  absl::StrCat("cannot read \"", raw.ca_file, "\""));
    }
  }
  return upstream;
}

// The engine configuration from the flags (and the config file's sets);
// its values are checked by ValidateEngineConfig, not here.
hedge::EngineConfig EngineConfigFromFlags(FlagReader& reader,
                                          const RawFlags& flags) {
  hedge::EngineConfig engine;
  const hedge::UpstreamConfig defaults = UpstreamDefaults(reader, flags);
  std::vector<RawUpstream> sets = flags.upstreams;
  // --backends sets the default set's replicas: the file's, or its own.
  bool from_backends = false;
  if (!flags.backends.empty()) {
    auto it = std::find_if(sets.begin(), sets.end(), [](const RawUpstream& u) {
      return u.name.empty();
    });
    if (it == sets.end()) it = sets.insert(sets.begin(), RawUpstream());
    it->replicas = flags.backends;
    from_backends = true;
  }
  if (sets.empty()) {
    if (flags.config.empty()) {
      reader.Fail("backends",
                  "required: a comma-separated list of replica URLs");
    } else {
      reader.Fail("config", absl::StrCat("\"", flags.config,
                                         "\" has no upstreams, and no "
                                         "--backends is given"));
    }
  }
  for (const RawUpstream& raw : sets) {
    const std::string replicas_key =
        raw.name.empty()
            ? std::string(from_backends ? "backends" : "replicas")
            : absl::StrCat("upstreams.", raw.name, ".replicas");
    engine.upstreams.push_back(
        UpstreamFromRaw(reader, defaults, raw, replicas_key,
                        !flags.health.max_ejection_time.empty()));
  }

  engine.timeout = reader.Duration("timeout", flags.timeout);
  engine.admission.max_requests =
      reader.Integer("max_requests", flags.max_requests);
  engine.tenant_share = reader.Number("tenant_share", flags.tenant_share);
  engine.admission.max_attempts =
      reader.Integer("max_attempts", flags.max_attempts);
  engine.max_response_bytes =
      reader.Integer("max_response_bytes", flags.max_response_bytes);
  engine.timer_spin = reader.Duration("timer_spin", flags.timer_spin);
  return engine;
}

}  // namespace

absl::Status ForFlagOfField(const absl::Status& status) {
  return ForSourceOfField(status, RawFlags());
}

absl::Status ForSourceOfField(const absl::Status& status,
                              const RawFlags& flags) {
  const std::optional<std::string> field = hedge::ErrorField(status);
  if (!field.has_value()) return status;
  const absl::string_view problem = hedge::ErrorProblem(status);
  const auto& locations = flags.file_locations;
  if (auto it = locations.find(*field); it != locations.end()) {
    return absl::Status(status.code(),
                        absl::StrCat(it->second, ": ", *field, ": ", problem));
  }
  const absl::string_view flag = FlagOfField(*field);
  // A named upstream's field that the file left to its flag.
  if (absl::StartsWith(*field, "upstreams.")) {
    const std::string upstream = field->substr(0, field->rfind('.'));
    if (auto it = locations.find(upstream); it != locations.end()) {
      return absl::Status(
          status.code(),
          absl::StrCat(it->second, ": ", *field,
                       flag.empty() ? "" : absl::StrCat(" (from --", flag, ")"),
                       ": ", problem));
    }
  }
  if (flag.empty()) return status;
  return flags::ForFlag(flag, absl::Status(status.code(), problem));
}

absl::StatusOr<ServerConfig> ConfigFromRawFlags(const RawFlags& flags) {
  FlagReader reader(&flags.file_locations);
  ServerConfig config;
  config.engine = EngineConfigFromFlags(reader, flags);

  config.listen = reader.Address("listen", flags.listen);
  config.admin = reader.Address("admin", flags.admin);
  config.metrics_listen =
      reader.Address("metrics_listen", flags.metrics_listen);
  if (config.metrics_listen.is_unix) {
    reader.Fail("metrics_listen", "want host:port (HTTP is served over TCP)");
  }
  CheckDistinct(reader, "admin", config.admin, "listen", config.listen);
  CheckDistinct(reader, "metrics_listen", config.metrics_listen, "listen",
                config.listen);
  CheckDistinct(reader, "metrics_listen", config.metrics_listen, "admin",
                config.admin);

  if (!flags.http_listen.empty()) {
    config.http_listen = reader.Address("http_listen", flags.http_listen);
    CheckDistinct(reader, "http_listen", *config.http_listen, "listen",
                  config.listen);
    CheckDistinct(reader, "http_listen", *config.http_listen, "admin",
                  config.admin);
    CheckDistinct(reader, "http_listen", *config.http_listen,
                  "metrics_listen", config.metrics_listen);
  }
  if (!flags.read_listen.empty()) {
    config.read_listen = reader.Address("read_listen", flags.read_listen);
    CheckDistinct(reader, "read_listen", *config.read_listen, "listen",
                  config.listen);
    CheckDistinct(reader, "read_listen", *config.read_listen, "admin",
                  config.admin);
    CheckDistinct(reader, "read_listen", *config.read_listen, "metrics_listen",
                  config.metrics_listen);
    if (config.http_listen.has_value()) {
      CheckDistinct(reader, "read_listen", *config.read_listen, "http_listen",
                    *config.http_listen);
    }
  }
  config.http_max_connections = static_cast<int>(reader.Take(
      "http_max_connections",
      flags::ParseInteger(flags.http_max_connections, 1, 1'000'000),
      int64_t{0}));
  config.http_header_timeout =
      reader.Duration("http_header_timeout", flags.http_header_timeout);
  if (config.http_header_timeout <= absl::ZeroDuration()) {
    reader.Fail("http_header_timeout", absl::StrCat("must be positive, got ",
                                                    flags.http_header_timeout));
  }

  // Defaults to twice max_requests, once that has been validated.
  int64_t streams = 0;
  if (!flags.max_streams_per_connection.empty()) {
    streams =
        reader.Take("max_streams_per_connection",
                    flags::ParseInteger(flags.max_streams_per_connection, 1,
                                        std::numeric_limits<int>::max()),
                    int64_t{0});
  }

  config.max_grpc_memory_bytes = reader.Take(
      "max_grpc_memory_bytes",
      flags::ParseInteger(flags.max_grpc_memory_bytes, int64_t{1} << 20,
                          int64_t{1} << 40),
      int64_t{0});

  config.max_connections = static_cast<int>(reader.Take(
      "max_connections", flags::ParseInteger(flags.max_connections, 1, 1000000),
      int64_t{0}));
  config.max_buffered_bytes = reader.Take(
      "max_buffered_bytes",
      flags::ParseInteger(flags.max_buffered_bytes, int64_t{1} << 20,
                          int64_t{1} << 40),
      int64_t{0});
  config.send_timeout = reader.Duration("send_timeout", flags.send_timeout);
  if (config.send_timeout <= absl::ZeroDuration()) {
    reader.Fail("send_timeout",
                absl::StrCat("must be positive, got ", flags.send_timeout));
  }

  config.drain_timeout = reader.Duration("drain_timeout", flags.drain_timeout);
  if (config.drain_timeout < absl::ZeroDuration()) {
    reader.Fail("drain_timeout", absl::StrCat("must not be negative, got ",
                                              flags.drain_timeout));
  }
  if (!flags.ca_file.empty() && access(flags.ca_file.c_str(), R_OK) != 0) {
    reader.Fail("ca_file", absl::StrCat("cannot read \"", flags.ca_file, "\""));
  }

  if (flags.listen_front == "loop") {
    config.listen_front = ListenFront::kLoop;
  } else if (flags.listen_front == "grpc") {
    config.listen_front = ListenFront::kGrpc;
  } else {
    reader.Fail("listen_front", absl::StrCat("want loop or grpc, got \"",
                                             flags.listen_front, "\""));
  }
  if (flags.log_format == "logfmt") {
    config.log_format = LogFormat::kLogfmt;
  } else if (flags.log_format == "json") {
    config.log_format = LogFormat::kJson;
  } else {
    reader.Fail("log_format", absl::StrCat("want logfmt or json, got \"",
                                           flags.log_format, "\""));
  }
  config.cpus = reader.Take("cpus", CpusToUse(flags.cpus), std::vector<int>());
  config.sched_policy =
      reader.Take("sched_policy", ParseSchedPolicy(flags.sched_policy),
                  SchedPolicy::kNormal);
  if (!reader.status().ok()) return reader.status();

  if (absl::Status s = hedge::ValidateEngineConfig(config.engine); !s.ok()) {
    return ForSourceOfField(s, flags);
  }
  if (config.max_buffered_bytes < config.engine.max_response_bytes) {
    reader.Fail("max_buffered_bytes",
                absl::StrCat("must be at least max_response_bytes (",
                             config.engine.max_response_bytes, "), got ",
                             config.max_buffered_bytes));
    return reader.status();
  }
  // Only now is max_requests known to be in range.
  config.max_streams_per_connection =
      flags.max_streams_per_connection.empty()
          ? static_cast<int>(
                std::min<int64_t>(2 * config.engine.admission.max_requests,
                                  std::numeric_limits<int>::max()))
          : static_cast<int>(streams);
  return config;
}

RawFlags RawFlagsFromCommandLine() {
  RawFlags flags;
  flags.config = absl::GetFlag(FLAGS_config);
  flags.backends = absl::GetFlag(FLAGS_backends);
  flags.listen = absl::GetFlag(FLAGS_listen);
  flags.admin = absl::GetFlag(FLAGS_admin);
  flags.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  flags.hedge_delay = absl::GetFlag(FLAGS_hedge_delay);
  flags.hedge_delay_min = absl::GetFlag(FLAGS_hedge_delay_min);
  flags.hedge_delay_max = absl::GetFlag(FLAGS_hedge_delay_max);
  flags.hedge_fraction = absl::GetFlag(FLAGS_hedge_fraction);
  flags.hedge_burst = absl::GetFlag(FLAGS_hedge_burst);
  flags.retry_fraction = absl::GetFlag(FLAGS_retry_fraction);
  flags.retry_per_second = absl::GetFlag(FLAGS_retry_per_second);
  flags.retry_window = absl::GetFlag(FLAGS_retry_window);
  flags.tenant_share = absl::GetFlag(FLAGS_tenant_share);
  flags.timeout = absl::GetFlag(FLAGS_timeout);
  flags.max_requests = absl::GetFlag(FLAGS_max_requests);
  flags.max_streams_per_connection =
      absl::GetFlag(FLAGS_max_streams_per_connection);
  flags.max_attempts = absl::GetFlag(FLAGS_max_attempts);
  flags.max_grpc_memory_bytes = absl::GetFlag(FLAGS_max_grpc_memory_bytes);
  flags.max_buffered_bytes = absl::GetFlag(FLAGS_max_buffered_bytes);
  flags.max_connections = absl::GetFlag(FLAGS_max_connections);
  flags.send_timeout = absl::GetFlag(FLAGS_send_timeout);
  flags.preconnect = absl::GetFlag(FLAGS_preconnect);
  flags.timer_spin = absl::GetFlag(FLAGS_timer_spin);
  flags.max_response_bytes = absl::GetFlag(FLAGS_max_response_bytes);
  flags.failure_threshold = absl::GetFlag(FLAGS_failure_threshold);
  flags.cooldown = absl::GetFlag(FLAGS_cooldown);
  flags.health = HealthFromCommandLine();
  flags.drain_timeout = absl::GetFlag(FLAGS_drain_timeout);
  flags.backend_http2 = absl::GetFlag(FLAGS_backend_http2);
  flags.ca_file = absl::GetFlag(FLAGS_ca_file);
  flags.log_format = absl::GetFlag(FLAGS_log_format);
  flags.listen_front = absl::GetFlag(FLAGS_listen_front);
  flags.cpus = absl::GetFlag(FLAGS_cpus);
  flags.sched_policy = absl::GetFlag(FLAGS_sched_policy);
  flags.http_listen = absl::GetFlag(FLAGS_http_listen);
  flags.http_max_connections = absl::GetFlag(FLAGS_http_max_connections);
  flags.read_listen = absl::GetFlag(FLAGS_read_listen);
  flags.http_header_timeout = absl::GetFlag(FLAGS_http_header_timeout);
  return flags;
}

}  // namespace tailgate::server
