// EngineConfig: what the engine is told at start-up — its replica sets
// (upstreams), each with its own hedging policy, and the limits it
// enforces — and ValidateEngineConfig, the one place every one of these
// values is checked.
//
// Example:
//   EngineConfig config;
//   UpstreamConfig& upstream = config.upstreams.emplace_back();
//   upstream.replicas = *hygiene::ParseReplicaList("http://a:80,http://b:80");
//   upstream.hedge_delay = absl::Milliseconds(10);
//   if (absl::Status s = ValidateEngineConfig(config); !s.ok()) ...
//
// This target depends on abseil and the pure policy only (no libcurl, no
// gRPC), so flag and config-file parsing can validate a configuration
// without linking the transport. What only the transport can know (whether
// this libcurl speaks h2c) is checked by Engine::Create.
//
// Thread safety: plain values and a pure function; safe from any thread.

#ifndef TAILGATE_HEDGE_CONFIG_ENGINE_CONFIG_H_
#define TAILGATE_HEDGE_CONFIG_ENGINE_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hedge/adaptive/adaptive_hedge_delay.h"
#include "hedge/health/circuit_breaker.h"
#include "hedge/health/give_up_point.h"
#include "hedge/hygiene/replica_url.h"
#include "hedge/policy/admission_limits.h"
#include "hedge/policy/hedge_budget.h"
#include "hedge/policy/retry_budget.h"

namespace tailgate::hedge {

enum class HttpVersion {
  kHttp1,  // HTTP/1.1 with keep-alive (default)
  kHttp2,  // h2 with prior knowledge for http://, ALPN for https://
};

// One replica set and its own policy settings.
struct UpstreamConfig {
  std::string name;  // "" is the default set
  std::vector<hygiene::ReplicaUrl> replicas;
  HedgeBudgetConfig budget;  // timer hedges
  RetryBudgetConfig retry;   // failure fallbacks
  // Each replica's health: ejection on outcome, probes, ramp-up; and the
  // set's ejection cap (max_ejected_share).
  CircuitConfig circuit;
  // When a read stops waiting for its primary (health/give_up_point.h).
  GiveUpConfig give_up;
  // How an ejected replica is probed: "" sends a copy of a live read of
  // this set beside the read's own attempt (nothing is sent while no read
  // comes); otherwise a GET (HEAD with probe_head) of this origin-form
  // target, as soon as the ejection is over.
  std::string probe_path;
  bool probe_head = false;
  // The delay before a hedge; with adaptive_delay.enabled, the delay is
  // learned from the upstream's primaries instead (adaptive_hedge_delay.h).
  absl::Duration hedge_delay = absl::Milliseconds(25);
  // The share of this set's hedge budget (its burst and its fraction) one
  // tenant may spend: see hedge/tenants/tenant_table.h. In (0, 1].
  double tenant_share = 1;
  AdaptiveDelayConfig adaptive_delay;
  HttpVersion http_version = HttpVersion::kHttp1;
  std::string ca_file;  // for https replicas; "" = system CAs
  // TCP connections kept open ahead of need per replica address, so an
  // attempt rarely waits for a handshake. 0 = none.
  int preconnect = 0;
  // This set's own limits; unset, the engine-wide value. Each is at most
  // the engine-wide value, which stays the ceiling of the memory bound.
  std::optional<absl::Duration> timeout;
  std::optional<int64_t> max_response_bytes;
  // Reads of this set in flight at once, within the global max_requests;
  // 0 = no cap of its own.
  int64_t max_requests = 0;
  // How often the names of `resolve` replicas (ReplicaUrl::resolve) are
  // looked up again.
  absl::Duration refresh_interval = absl::Seconds(5);
  // Reads of this set in flight at once with the same method, target,
  // headers and hedge options share one upstream fetch and its hedge
  // (hedge/transport/coalesce_key.h); each keeps its own deadline,
  // cancellation and copy of the answer.
  bool coalesce = false;
};

struct EngineConfig {
  std::vector<UpstreamConfig> upstreams;
  AdmissionConfig admission;
  // The share of admission.max_requests one tenant may hold at once
  // (at least one read). In (0, 1].
  double tenant_share = 1;
  int64_t max_response_bytes = int64_t{4} << 20;
  absl::Duration timeout = absl::Seconds(1);  // cap on every read's deadline
  int max_response_headers = 100;
  int64_t max_response_header_bytes = 64 << 10;
  // The loop wakes this long before a timer (a hedge) is due and spins
  // until it is, instead of paying an idle CPU's wake-up on the hedge; at
  // most this much CPU per timer that fires. Off by default: it is for a
  // sidecar with a CPU of its own, not one that shares the app's.
  absl::Duration timer_spin = absl::ZeroDuration();
};

// Limits ValidateEngineConfig enforces.
inline constexpr int64_t kMaxResponseBytesHardCap = int64_t{64} << 20;
inline constexpr int kMaxPreconnect = 16;  // UpstreamConfig::preconnect
inline constexpr absl::Duration kMaxTimerSpin = absl::Milliseconds(1);
// UpstreamConfig::refresh_interval.
inline constexpr absl::Duration kMinRefreshInterval = absl::Milliseconds(10);
inline constexpr absl::Duration kMaxRefreshInterval = absl::Hours(1);
// UpstreamConfig::max_requests (like AdmissionConfig::max_requests).
inline constexpr int64_t kMaxUpstreamRequests = 1000000;
// How long after a warm connection is handed out (or curl opens one of its
// own) its replacement is connected, counted from the first such need since
// the pool's last top-up: not in the iteration that sends the attempt's
// request.
inline constexpr absl::Duration kPreconnectRefillDelay = absl::Milliseconds(1);

// Checks every field, the policy objects' settings included. The first
// problem found is returned as a FieldError (field_error.h) naming the
// field: `replicas`, `hedge_delay`, `hedge_delay_min` and `hedge_delay_max`
// (checked when the adaptive delay is on), `hedge_fraction`, `hedge_burst`,
// `retry_fraction`, `retry_per_second`, `retry_window`, `tenant_share`,
// `failure_threshold`, `cooldown`, `ejection_failure_rate`,
// `ejection_min_requests`, `ejection_window`, `max_ejection_time`,
// `probe_successes`, `ramp_up`, `max_ejected_share`, `give_up_factor`,
// `give_up_min`, `give_up_max`, `probe_path`, `preconnect`, `timeout`,
// `max_response_bytes`, `max_requests`, `refresh_interval`, `upstreams`
// (duplicate names), `max_requests`, `max_attempts`, `max_response_bytes`,
// `timeout`,
// `timer_spin`, `max_response_headers`, `max_response_header_bytes`; the
// fields of a named upstream are prefixed with `upstreams.NAME.`.
absl::Status ValidateEngineConfig(const EngineConfig& config);

// Checks `upstreams` as ValidateEngineConfig would within `config`'s
// engine-wide limits (its own upstreams are ignored): what a reload of
// the replica sets must pass while the rest of the engine stays.
absl::Status ValidateUpstreams(const std::vector<UpstreamConfig>& upstreams,
                               const EngineConfig& config);

// What an upstream's reads get: its own value, else the engine-wide one.
inline absl::Duration EffectiveTimeout(const UpstreamConfig& upstream,
                                       const EngineConfig& config) {
  return upstream.timeout.value_or(config.timeout);
}
inline int64_t EffectiveMaxResponseBytes(const UpstreamConfig& upstream,
                                         const EngineConfig& config) {
  return upstream.max_response_bytes.value_or(config.max_response_bytes);
}

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_CONFIG_ENGINE_CONFIG_H_
