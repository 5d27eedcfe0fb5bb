#include "server/config/health_settings.h"

#include <algorithm>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(std::string, ejection_failure_rate,
          tailgate::server::HealthFlagDefaults().ejection_failure_rate,
          "Eject a replica when at least this share, in (0, 1], of its "
          "outcomes in --ejection_window failed (with at least "
          "--ejection_min_requests of them).");
ABSL_FLAG(std::string, ejection_min_requests,
          tailgate::server::HealthFlagDefaults().ejection_min_requests,
          "Outcomes a replica's --ejection_window must hold before its "
          "failure rate can eject it (1 to 1000000).");
ABSL_FLAG(std::string, ejection_window,
          tailgate::server::HealthFlagDefaults().ejection_window,
          "The sliding window of each replica's failure rate (100ms to 1h).");
ABSL_FLAG(std::string, max_ejection_time,
          tailgate::server::HealthFlagDefaults().max_ejection_time,
          "The longest ejection (--cooldown to 1h): each ejection in a row "
          "doubles the last, up to this. Default: 10s, or --cooldown when "
          "that is longer.");
ABSL_FLAG(std::string, probe_successes,
          tailgate::server::HealthFlagDefaults().probe_successes,
          "Probes in a row that must succeed to bring an ejected replica "
          "back (1 to 100); a failed probe ejects it again, for longer.");
ABSL_FLAG(std::string, ramp_up, tailgate::server::HealthFlagDefaults().ramp_up,
          "After an ejection, a replica's share of reads grows from 10% to "
          "all of it over this long (0 to 1h; 0: at once).");
ABSL_FLAG(std::string, max_ejected_share,
          tailgate::server::HealthFlagDefaults().max_ejected_share,
          "The share, in [0, 1], of a set's replicas that may be out at once "
          "(one always may, in a set of two or more; never the last one "
          "serving). 0 never ejects.");
ABSL_FLAG(std::string, give_up_factor,
          tailgate::server::HealthFlagDefaults().give_up_factor,
          "Give up on a primary that has run this many times the p99 of the "
          "upstream's recent answers (within --give_up_min and "
          "--give_up_max) and fall back to another replica, paid by the "
          "retry budget: 0 (off) or 1 to 100.");
ABSL_FLAG(std::string, give_up_min,
          tailgate::server::HealthFlagDefaults().give_up_min,
          "The least the give-up point may be (> 0, at most 1h).");
ABSL_FLAG(std::string, give_up_max,
          tailgate::server::HealthFlagDefaults().give_up_max,
          "The most the give-up point may be (>= --give_up_min, at most 1h). "
          "Until ten answers were seen the point is four hedge delays, "
          "within --give_up_min and --give_up_max.");
ABSL_FLAG(std::string, probe_path,
          tailgate::server::HealthFlagDefaults().probe_path.value_or(""),
          "How an ejected replica is probed: empty (default) copies a live "
          "read of its set to it, beside the read's own attempt (no read, no "
          "probe); a target such as /healthz is requested with "
          "--probe_method as soon as the ejection is over.");
ABSL_FLAG(std::string, probe_method,
          tailgate::server::HealthFlagDefaults().probe_method,
          "The method of --probe_path's probes: GET or HEAD.");

namespace tailgate::server {

RawHealth HealthFlagDefaults() {
  const hedge::CircuitConfig circuit;
  const hedge::GiveUpConfig give_up;
  RawHealth raw;
  raw.ejection_failure_rate = absl::StrCat(circuit.failure_rate);
  raw.ejection_min_requests = absl::StrCat(circuit.min_requests);
  raw.ejection_window = absl::FormatDuration(circuit.window);
  raw.probe_successes = absl::StrCat(circuit.probe_successes);
  raw.ramp_up = absl::FormatDuration(circuit.ramp_up);
  raw.max_ejected_share = absl::StrCat(circuit.max_ejected_share);
  raw.give_up_factor = absl::StrCat(give_up.factor);
  raw.give_up_min = absl::FormatDuration(give_up.min);
  raw.give_up_max = absl::FormatDuration(give_up.max);
  raw.probe_path = "";
  raw.probe_method = "GET";
  return raw;
}

absl::Duration DefaultMaxEjectionTime(absl::Duration cooldown) {
  return std::max(hedge::CircuitConfig().max_ejection_time, cooldown);
}

RawHealth HealthFromCommandLine() {
  RawHealth raw;
  raw.ejection_failure_rate = absl::GetFlag(FLAGS_ejection_failure_rate);
  raw.ejection_min_requests = absl::GetFlag(FLAGS_ejection_min_requests);
  raw.ejection_window = absl::GetFlag(FLAGS_ejection_window);
  raw.max_ejection_time = absl::GetFlag(FLAGS_max_ejection_time);
  raw.probe_successes = absl::GetFlag(FLAGS_probe_successes);
  raw.ramp_up = absl::GetFlag(FLAGS_ramp_up);
  raw.max_ejected_share = absl::GetFlag(FLAGS_max_ejected_share);
  raw.give_up_factor = absl::GetFlag(FLAGS_give_up_factor);
  raw.give_up_min = absl::GetFlag(FLAGS_give_up_min);
  raw.give_up_max = absl::GetFlag(FLAGS_give_up_max);
  raw.probe_path = absl::GetFlag(FLAGS_probe_path);
  raw.probe_method = absl::GetFlag(FLAGS_probe_method);
  return raw;
}

void ApplyHealth(FlagReader& reader, absl::string_view prefix,
                 const RawHealth& raw, hedge::UpstreamConfig& upstream) {
  const auto key = [prefix](absl::string_view field) {
    return absl::StrCat(prefix, field);
  };
  hedge::CircuitConfig& circuit = upstream.circuit;
  hedge::GiveUpConfig& give_up = upstream.give_up;
  const auto number = [&](absl::string_view field, const std::string& text,
                          double& to) {
    if (!text.empty()) to = reader.Number(key(field), text);
  };
  const auto integer = [&](absl::string_view field, const std::string& text,
                           int& to) {
    if (!text.empty()) to = reader.Int(key(field), text);
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
  if (raw.probe_method == "GET" || raw.probe_method == "HEAD") {
    upstream.probe_head = raw.probe_method == "HEAD";
  } else if (!raw.probe_method.empty()) {
    reader.Fail(key("probe_method"), absl::StrCat("want GET or HEAD, got \"",
                                                  raw.probe_method, "\""));
  }
}

}  // namespace tailgate::server
