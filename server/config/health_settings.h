// The replica-health settings of an upstream as text, from the flags and
// the config file: outlier ejection (failure rate over a window, the
// longest ejection, the share of a set that may be out), probes, ramp-up
// and the give-up point (hedge/health/circuit_breaker.h, hedge/health/).
//
// --failure_threshold and --cooldown, the circuit settings that came
// first, stay in RawFlags and RawUpstream beside the other policy fields.
//
// Every field is named like its flag and its config file field; the
// engine's FieldError names the same (ValidateEngineConfig), except
// probe_method, which sets UpstreamConfig::probe_head. Values are parsed
// here and checked by the engine (ValidateEngineConfig).
//
// Thread safety: plain values and pure functions.

#ifndef TAILGATE_SERVER_CONFIG_HEALTH_SETTINGS_H_
#define TAILGATE_SERVER_CONFIG_HEALTH_SETTINGS_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "hedge/config/engine_config.h"
#include "server/config/flag_reader.h"
#include "server/config/raw_value.h"

namespace tailgate::server {

// Empty (nullopt for probe_path) leaves the value as it is.
struct RawHealth {
  RawValue ejection_failure_rate;
  RawValue ejection_min_requests;
  std::string ejection_window;
  // Empty in the flags' defaults too: DefaultMaxEjectionTime.
  std::string max_ejection_time;
  RawValue probe_successes;
  std::string ramp_up;
  RawValue max_ejected_share;
  RawValue give_up_factor;  // 0 turns giving up off
  std::string give_up_min;
  std::string give_up_max;
  std::optional<std::string> probe_path;  // "" = copy live reads
  std::string probe_method;               // GET or HEAD
};

// The flags' defaults, as declared (schema/settings_schema.h): the
// engine's (CircuitConfig, GiveUpConfig).
RawHealth HealthFlagDefaults();

// Parses the values `raw` sets into `upstream`; `prefix` ("" or
// "upstreams.NAME.") makes each field's key for `reader`.
void ApplyHealth(FlagReader& reader, absl::string_view prefix,
                 const RawHealth& raw, hedge::UpstreamConfig& upstream);

// max_ejection_time when neither its flag nor the upstream sets it: the
// engine's default, or `cooldown` when that is longer, so that a long
// --cooldown alone is valid.
absl::Duration DefaultMaxEjectionTime(absl::Duration cooldown);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_HEALTH_SETTINGS_H_
