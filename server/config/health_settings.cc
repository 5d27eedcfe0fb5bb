#include "server/config/health_settings.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/config/schema/settings_schema.h"

namespace tailgate::server {

RawHealth HealthFlagDefaults() {
  RawHealth raw;
  raw.ejection_failure_rate = SettingDefault("ejection_failure_rate");
  raw.ejection_min_requests = SettingDefault("ejection_min_requests");
  raw.ejection_window = SettingDefault("ejection_window");
  raw.max_ejection_time = SettingDefault("max_ejection_time");
  raw.probe_successes = SettingDefault("probe_successes");
  raw.ramp_up = SettingDefault("ramp_up");
  raw.max_ejected_share = SettingDefault("max_ejected_share");
  raw.give_up_factor = SettingDefault("give_up_factor");
  raw.give_up_min = SettingDefault("give_up_min");
  raw.give_up_max = SettingDefault("give_up_max");
  raw.probe_path = SettingDefault("probe_path");
  raw.probe_method = SettingDefault("probe_method");
  return raw;
}

absl::Duration DefaultMaxEjectionTime(absl::Duration cooldown) {
  return std::max(hedge::CircuitConfig().max_ejection_time, cooldown);
}

void ApplyHealth(FlagReader& reader, absl::string_view prefix,
                 const RawHealth& raw, hedge::UpstreamConfig& upstream) {
  const auto key = [prefix](absl::string_view field) {
    return absl::StrCat(prefix, field);
  };
  hedge::CircuitConfig& circuit = upstream.circuit;
  hedge::GiveUpConfig& give_up = upstream.give_up;
  const auto number = [&](absl::string_view field, const RawValue& value,
                          double& to) {
    if (!value.empty()) to = reader.Number(key(field), value);
  };
  const auto integer = [&](absl::string_view field, const RawValue& value,
                           int& to) {
    if (!value.empty()) to = reader.Int(key(field), value);
  };
  const auto duration = [&](absl::string_view field, const std::string& text,
                            absl::Duration& to) {
    if (!text.empty()) to = reader.Duration(key(field), text);
  };
  number("ejection_failure_rate", raw.ejection_failure_rate,
         circuit.failure_rate);
  integer("ejection_min_requests", raw.ejection_min_requests,
          circuit.min_requests);
  duration("ejection_window", raw.ejection_window, circuit.window);
  duration("max_ejection_time", raw.max_ejection_time,
           circuit.max_ejection_time);
  integer("probe_successes", raw.probe_successes, circuit.probe_successes);
  duration("ramp_up", raw.ramp_up, circuit.ramp_up);
  number("max_ejected_share", raw.max_ejected_share, circuit.max_ejected_share);
  number("give_up_factor", raw.give_up_factor, give_up.factor);
  duration("give_up_min", raw.give_up_min, give_up.min);
  duration("give_up_max", raw.give_up_max, give_up.max);
  if (raw.probe_path.has_value()) upstream.probe_path = *raw.probe_path;
  if (!raw.probe_method.empty() && Allows("probe_method", raw.probe_method)) {
    upstream.probe_head = raw.probe_method == "HEAD";
  } else if (!raw.probe_method.empty()) {
    reader.Fail(key("probe_method"),
                absl::StrCat("want ", AllowedText("probe_method"), ", got \"",
                             raw.probe_method, "\""));
  }
}

}  // namespace tailgate::server
