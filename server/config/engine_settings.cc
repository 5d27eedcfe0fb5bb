#include "server/config/engine_settings.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "flags/flag_values.h"
#include "hedge/errors/field_error.h"
#include "hedge/hygiene/replica_url.h"
#include "server/config/health_settings.h"

namespace tailgate::server {
namespace {

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
    {"coalesce", "coalesce"},
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
  upstream.coalesce = flags.coalesce;
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
  if (raw.coalesce.has_value()) upstream.coalesce = *raw.coalesce;
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

}  // namespace

// The engine configuration from the flags (and the config file's sets);
// its values are checked by ValidateEngineConfig, not here.
hedge::EngineConfig EngineConfigFromFlags(FlagReader& reader,
                                          const RawFlags& flags) {
  hedge::EngineConfig engine;
  // Before the upstreams' defaults, which take it too: a bad value from
  // the file is named at its place there, not as the flag.
  engine.tenant_share = reader.Number("tenant_share", flags.tenant_share);
  const hedge::UpstreamConfig defaults = UpstreamDefaults(reader, flags);
  std::vector<RawUpstream> sets = flags.upstreams;
  // --backends sets the default set's replicas: the file's, or its own.
  bool from_backends = false;
  if (!flags.backends.empty()) {
    auto it = std::find_if(sets.begin(), sets.end(),
                           [](const RawUpstream& u) { return u.name.empty(); });
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
        raw.name.empty() ? std::string(from_backends ? "backends" : "replicas")
                         : absl::StrCat("upstreams.", raw.name, ".replicas");
    engine.upstreams.push_back(
        UpstreamFromRaw(reader, defaults, raw, replicas_key,
                        !flags.health.max_ejection_time.empty()));
  }

  engine.timeout = reader.Duration("timeout", flags.timeout);
  engine.admission.max_requests =
      reader.Integer("max_requests", flags.max_requests);
  engine.admission.max_attempts =
      reader.Integer("max_attempts", flags.max_attempts);
  engine.max_response_bytes =
      reader.Integer("max_response_bytes", flags.max_response_bytes);
  engine.timer_spin = reader.Duration("timer_spin", flags.timer_spin);
  return engine;
}

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

}  // namespace tailgate::server
