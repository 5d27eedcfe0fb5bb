#include "hedge/config/engine_config.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hedge/errors/field_error.h"
#include "hedge/hygiene/http_hygiene.h"

namespace tailgate::hedge {
namespace {

absl::Status ValidateTenantShare(double share) {
  // Written so that NaN fails too.
  if (!(share > 0 && share <= 1)) {
    return FieldError("tenant_share",
                      absl::StrFormat("must be in (0, 1], got %.10g", share));
  }
  return absl::OkStatus();
}

// The limits an upstream may set for itself, each within the engine's.
absl::Status ValidateUpstreamLimits(const UpstreamConfig& upstream,
                                    const EngineConfig& config) {
  if (upstream.timeout.has_value() &&
      (*upstream.timeout <= absl::ZeroDuration() ||
       *upstream.timeout > config.timeout)) {
    return FieldError(
        "timeout", absl::StrCat("must be positive and at most the global "
                                "timeout (",
                                absl::FormatDuration(config.timeout), "), got ",
                                absl::FormatDuration(*upstream.timeout)));
  }
  if (upstream.max_response_bytes.has_value() &&
      (*upstream.max_response_bytes < 1 ||
       *upstream.max_response_bytes > config.max_response_bytes)) {
    return FieldError("max_response_bytes",
                      absl::StrCat("must be in [1, ", config.max_response_bytes,
                                   "] (the global max_response_bytes), got ",
                                   *upstream.max_response_bytes));
  }
  if (upstream.max_requests < 0 ||
      upstream.max_requests > kMaxUpstreamRequests) {
    return FieldError("max_requests",
                      absl::StrCat("must be in [0, ", kMaxUpstreamRequests,
                                   "] (0: no cap of its own), got ",
                                   upstream.max_requests));
  }
  if (upstream.refresh_interval < kMinRefreshInterval ||
      upstream.refresh_interval > kMaxRefreshInterval) {
    return FieldError(
        "refresh_interval",
        absl::StrCat("must be in [", absl::FormatDuration(kMinRefreshInterval),
                     ", ", absl::FormatDuration(kMaxRefreshInterval),
                     "], got ", absl::FormatDuration(upstream.refresh_interval)));
  }
  // Each address of a resolved name is labelled NAME@ADDRESS: one name
  // per set, or two replicas would share a label.
  absl::flat_hash_set<std::string> resolved;
  for (const hygiene::ReplicaUrl& replica : upstream.replicas) {
    if (replica.resolve && !resolved.insert(replica.host).second) {
      return FieldError("replicas",
                        absl::StrCat("\"", replica.host,
                                     "\" is resolved twice in one set"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateUpstream(const UpstreamConfig& upstream,
                              const EngineConfig& config) {
  if (upstream.replicas.empty()) {
    return FieldError("replicas", "no replica configured");
  }
  if (absl::Status s = ValidateUpstreamLimits(upstream, config); !s.ok()) {
    return s;
  }
  const absl::Duration timeout = EffectiveTimeout(upstream, config);
  if (absl::Status s = ValidateHedgeBudgetConfig(upstream.budget); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateRetryBudgetConfig(upstream.retry); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateTenantShare(upstream.tenant_share); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateCircuitConfig(upstream.circuit); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateGiveUpConfig(upstream.give_up); !s.ok()) {
    return s;
  }
  if (!upstream.probe_path.empty()) {
    if (absl::Status s = hygiene::ValidateRequestTarget(upstream.probe_path);
        !s.ok()) {
      return FieldError("probe_path", s.message());
    }
  }
  if (upstream.hedge_delay <= absl::ZeroDuration()) {
    return FieldError("hedge_delay",
                      absl::StrCat("must be positive, got ",
                                   absl::FormatDuration(upstream.hedge_delay)));
  }
  if (upstream.hedge_delay >= timeout) {
    return FieldError("hedge_delay",
                      absl::StrCat("must be less than timeout (",
                                   absl::FormatDuration(timeout), "), got ",
                                   absl::FormatDuration(upstream.hedge_delay)));
  }
  if (upstream.adaptive_delay.enabled) {
    if (absl::Status s = ValidateAdaptiveDelayConfig(upstream.adaptive_delay);
        !s.ok()) {
      return s;
    }
    if (upstream.adaptive_delay.max >= timeout) {
      return FieldError(
          "hedge_delay_max",
          absl::StrCat("must be less than timeout (",
                       absl::FormatDuration(timeout), "), got ",
                       absl::FormatDuration(upstream.adaptive_delay.max)));
    }
  }
  if (upstream.preconnect < 0 || upstream.preconnect > kMaxPreconnect) {
    return FieldError("preconnect",
                      absl::StrCat("must be in [0, ", kMaxPreconnect, "], got ",
                                   upstream.preconnect));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateEngineConfig(const EngineConfig& config) {
  // Engine-wide limits first: an upstream's hedge_delay is checked against
  // the timeout.
  if (config.timeout <= absl::ZeroDuration() ||
      config.timeout == absl::InfiniteDuration()) {
    return FieldError("timeout",
                      absl::StrCat("must be positive and finite, got ",
                                   absl::FormatDuration(config.timeout)));
  }
  if (absl::Status s = ValidateAdmissionConfig(config.admission); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateTenantShare(config.tenant_share); !s.ok()) {
    return s;
  }
  if (config.max_response_bytes < 1 ||
      config.max_response_bytes > kMaxResponseBytesHardCap) {
    return FieldError(
        "max_response_bytes",
        absl::StrCat("must be in [1, ", kMaxResponseBytesHardCap,
                     "] (64 MiB), got ", config.max_response_bytes));
  }
  if (config.timer_spin < absl::ZeroDuration() ||
      config.timer_spin > kMaxTimerSpin) {
    return FieldError(
        "timer_spin",
        absl::StrCat("must be in [0, ", absl::FormatDuration(kMaxTimerSpin),
                     "], got ", absl::FormatDuration(config.timer_spin)));
  }
  if (config.max_response_headers < 1) {
    return FieldError(
        "max_response_headers",
        absl::StrCat("must be positive, got ", config.max_response_headers));
  }
  if (config.max_response_header_bytes < 1) {
    return FieldError("max_response_header_bytes",
                      absl::StrCat("must be positive, got ",
                                   config.max_response_header_bytes));
  }
  return ValidateUpstreams(config.upstreams, config);
}

absl::Status ValidateUpstreams(const std::vector<UpstreamConfig>& upstreams,
                               const EngineConfig& config) {
  if (upstreams.empty()) {
    return FieldError("upstreams", "no replica set configured");
  }
  absl::flat_hash_set<std::string> names;
  for (const UpstreamConfig& upstream : upstreams) {
    if (!names.insert(upstream.name).second) {
      return FieldError("upstreams",
                        absl::StrCat("duplicate name \"", upstream.name, "\""));
    }
    absl::Status s = ValidateUpstream(upstream, config);
    if (!upstream.name.empty()) {
      s = PrefixField(absl::StrCat("upstreams.", upstream.name, "."), s);
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace tailgate::hedge
