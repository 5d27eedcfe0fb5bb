#include "server/sidecar/start_log.h"

#include <string.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cpus/cpu_set.h"
#include "hedge/config/engine_config.h"
#include "server/process/sched_policy.h"

namespace tailgate::server {
namespace {

// The replica URLs of `upstream` as configured, comma-separated.
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
  return absl::StrCat("auto(",
                      absl::FormatDuration(upstream.adaptive_delay.min), "..",
                      absl::FormatDuration(upstream.adaptive_delay.max), ")");
}

}  // namespace

void LogStart(Logger& log, const ServerConfig& config, const BuildInfo& build) {
  const hedge::UpstreamConfig& upstream = config.engine.upstreams[0];
  log.Info(
      "start",
      {{"version", build.version},
       {"commit", build.commit},
       {"backends", Backends(upstream)},
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
       {"coalesce", upstream.coalesce},
       {"cpus",
        config.cpus.empty() ? std::string("any") : FormatCpuList(config.cpus)},
       {"sched_policy", SchedPolicyName(config.sched_policy)},
       {"upstreams", config.engine.upstreams.size()}});
  if (config.engine.upstreams.size() < 2) return;
  for (const hedge::UpstreamConfig& set : config.engine.upstreams) {
    log.Info("upstream",
             {{"name", set.name},
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
              {"backend_http2", set.http_version == hedge::HttpVersion::kHttp2},
              {"coalesce", set.coalesce}});
  }
}

AcceptBackoff::Report AcceptFailureLog(const Logger& log,
                                       absl::string_view listener) {
  return
      [&log, listener = std::string(listener)](int error, uint64_t failures) {
        log.Warn("accept_failed", {{"listener", listener},
                                   {"error", strerror(error)},
                                   {"failures", failures},
                                   {"pause", absl::Seconds(1)}});
      };
}

namespace {

// Logs `event` with the count at the 1st, 10th, 100th... time.
std::function<void(uint64_t)> PowersOfTenLog(const Logger& log,
                                             absl::string_view event,
                                             absl::string_view field,
                                             absl::string_view listener) {
  return [&log, event = std::string(event), field = std::string(field),
          listener = std::string(listener)](uint64_t count) {
    uint64_t power = 1;
    while (power < count) power *= 10;
    if (power != count) return;
    log.Warn(event, {{"listener", listener}, {field, count}});
  };
}

}  // namespace

std::function<void(uint64_t)> ConnectionRefusedLog(const Logger& log,
                                                   absl::string_view listener) {
  return PowersOfTenLog(log, "connections_refused", "refused", listener);
}

std::function<void(uint64_t)> IdleConnectionClosedLog(
    const Logger& log, absl::string_view listener) {
  return PowersOfTenLog(log, "idle_connections_closed", "closed", listener);
}

}  // namespace tailgate::server
