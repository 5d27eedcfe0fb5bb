#include "hedge/config/engine_config.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hedge/config/field_error.h"

namespace tailgate::hedge {
namespace {

absl::Status ValidateUpstream(const UpstreamConfig& upstream,
                              absl::Duration timeout) {
  if (upstream.replicas.empty()) {
    return FieldError("replicas", "no replica configured");
  }
  if (absl::Status s = ValidateHedgeBudgetConfig(upstream.budget); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateCircuitConfig(upstream.circuit); !s.ok()) {
    return s;
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
  if (config.upstreams.empty()) {
    return FieldError("upstreams", "no replica set configured");
  }
  absl::flat_hash_set<std::string> names;
  for (const UpstreamConfig& upstream : config.upstreams) {
    if (!names.insert(upstream.name).second) {
      return FieldError("upstreams",
                        absl::StrCat("duplicate name \"", upstream.name, "\""));
    }
    absl::Status s = ValidateUpstream(upstream, config.timeout);
    if (!upstream.name.empty()) {
      s = PrefixField(absl::StrCat("upstreams.", upstream.name, "."), s);
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace tailgate::hedge
