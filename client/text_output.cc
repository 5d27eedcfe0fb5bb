#include "client/text_output.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace tailgate::cli {
namespace {

absl::string_view Bool(bool value) { return value ? "true" : "false"; }

// `text` with its line breaks made spaces.
std::string OneLine(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"\r", " "}, {"\n", " "}});
}

std::string HedgeChoice(const ReadRequest& request) {
  if (request.disable_hedge) return "off";
  if (request.hedge_delay == absl::ZeroDuration()) return "(default)";
  return absl::FormatDuration(request.hedge_delay);
}

// JSON has no NaN or infinity.
std::string JsonNumber(double value) {
  return std::isfinite(value) ? absl::StrCat(value) : "null";
}

std::string JsonString(absl::string_view text) {
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      absl::StrAppend(&quoted, "\\", absl::string_view(&c, 1));
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&quoted, "\\u%04x", c);
    } else {
      quoted.push_back(c);
    }
  }
  quoted.push_back('"');
  return quoted;
}

// The sidecar-wide counters in proto field order, as (name, value) text.
std::vector<std::pair<absl::string_view, std::string>> Counters(
    const SidecarStats& stats, std::string (*real)(double)) {
  return {
      {"requests", absl::StrCat(stats.requests)},
      {"rejected", absl::StrCat(stats.rejected)},
      {"attempts", absl::StrCat(stats.attempts)},
      {"hedges", absl::StrCat(stats.hedges)},
      {"hedge_wins", absl::StrCat(stats.hedge_wins)},
      {"hedges_skipped", absl::StrCat(stats.hedges_skipped)},
      {"timeouts", absl::StrCat(stats.timeouts)},
      {"cancelled", absl::StrCat(stats.cancelled)},
      {"backend_failures", absl::StrCat(stats.backend_failures)},
      {"in_flight", absl::StrCat(stats.in_flight)},
      {"amplification", real(stats.amplification)},
      {"hedge_credits", real(stats.hedge_credits)},
  };
}

std::string PlainNumber(double value) { return absl::StrCat(value); }

// A Duration in the proto's JSON form: seconds, up to nine decimals (no
// trailing zeros), and an "s".
std::string JsonDuration(absl::Duration d) {
  const int64_t nanos = absl::ToInt64Nanoseconds(d);
  const uint64_t magnitude =
      nanos < 0 ? -static_cast<uint64_t>(nanos) : static_cast<uint64_t>(nanos);
  std::string text =
      absl::StrFormat("%s%d.%09d", nanos < 0 ? "-" : "",
                      magnitude / 1'000'000'000, magnitude % 1'000'000'000);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return absl::StrCat("\"", text, "s\"");
}

// To the microsecond: a latency estimate's nanoseconds are noise.
std::string ShortDuration(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Microseconds(1)));
}

// Each replica's health: its share of reads, what choosing it costs, its
// ejections and probes, its Retry-After back-off (what is left of it, "-"
// when none is in force) and its overload answers.
std::string HealthTable(const std::vector<ReplicaStats>& replicas, int width) {
  std::string text = absl::StrFormat(
      "%-*s  %6s  %10s  %9s  %9s  %11s  %15s  %13s  %8s  %10s  %16s\n", width,
      "REPLICA", "WEIGHT", "LATENCY", "COST_S", "FAIL_RATE", "EJECTED_FOR",
      "EJECTIONS c/r/p", "PROBES ok/bad", "GIVE_UPS", "BACKED_OFF",
      "OVERLOAD 429/503");
  for (const ReplicaStats& r : replicas) {
    absl::StrAppendFormat(
        &text,
        "%-*s  %6.3g  %10s  %9.3g  %9.3g  %11s  %15s  %13s  %8d  %10s  %16s\n",
        width, r.url, r.weight, ShortDuration(r.latency), r.cost_seconds,
        r.failure_rate, ShortDuration(r.ejected_for),
        absl::StrCat(r.ejections_consecutive, "/", r.ejections_failure_rate,
                     "/", r.ejections_probe),
        absl::StrCat(r.probes_passed, "/", r.probes_failed), r.give_ups,
        r.backed_off ? ShortDuration(r.back_off_remaining) : std::string("-"),
        absl::StrCat(r.overload_answers_429, "/", r.overload_answers_503));
  }
  return text;
}

// Each upstream's give-up point ("off" when it gives up on nothing) and
// the fallbacks it paid for.
std::string GiveUpTable(const SidecarStats& stats) {
  size_t name_width = 9;  // "(default)"
  for (const UpstreamStats& upstream : stats.upstreams) {
    name_width = std::max(name_width, upstream.name.size());
  }
  const int width = static_cast<int>(name_width);
  std::string text =
      absl::StrFormat("%-*s  %13s  %7s  %17s\n", width, "UPSTREAM",
                      "GIVE_UP_AFTER", "LEARNED", "GIVE_UP_FALLBACKS");
  for (const UpstreamStats& u : stats.upstreams) {
    absl::StrAppendFormat(&text, "%-*s  %13s  %7s  %17d\n", width,
                          u.name.empty() ? "(default)" : u.name,
                          u.give_up_after == absl::ZeroDuration()
                              ? std::string("off")
                              : ShortDuration(u.give_up_after),
                          Bool(u.give_up_learned), u.give_up_fallbacks);
  }
  return text;
}

// A replica's health fields, proto names, for its JSON object.
std::string ReplicaHealthJson(const ReplicaStats& r) {
  return absl::StrCat(
      "\"state\":", JsonString(ReplicaStateName(r.state)),
      ",\"ejections_consecutive\":", r.ejections_consecutive,
      ",\"ejections_failure_rate\":", r.ejections_failure_rate,
      ",\"ejections_probe\":", r.ejections_probe, ",\"give_ups\":", r.give_ups,
      ",\"probes_passed\":", r.probes_passed,
      ",\"probes_failed\":", r.probes_failed,
      ",\"weight\":", JsonNumber(r.weight),
      ",\"cost_seconds\":", JsonNumber(r.cost_seconds),
      ",\"latency\":", JsonDuration(r.latency),
      ",\"failure_rate\":", JsonNumber(r.failure_rate),
      ",\"ejected_for\":", JsonDuration(r.ejected_for),
      ",\"backed_off\":", Bool(r.backed_off),
      ",\"back_off_remaining\":", JsonDuration(r.back_off_remaining),
      ",\"overload_answers_429\":", r.overload_answers_429,
      ",\"overload_answers_503\":", r.overload_answers_503,
      ",\"degraded\":", Bool(r.degraded));
}

}  // namespace

std::string FormatRequest(absl::string_view target, absl::Duration deadline,
                          const ReadRequest& request) {
  std::string text = absl::StrCat(
      "* target=", target,
      " upstream=", request.upstream.empty() ? "(default)" : request.upstream,
      " deadline=", absl::FormatDuration(deadline),
      " hedge=", HedgeChoice(request), "\n");
  absl::StrAppend(&text, "> ", request.method == Method::kHead ? "HEAD" : "GET",
                  " ", request.path, "\n");
  for (const Header& header : request.headers) {
    absl::StrAppend(&text, "> ", header.name, ": ", header.value, "\n");
  }
  return text;
}

std::string FormatResponse(const ReadResponse& response) {
  std::string text = absl::StrCat("< HTTP ", response.status, "\n");
  for (const Header& header : response.headers) {
    absl::StrAppend(&text, "< ", header.name, ": ", header.value, "\n");
  }
  const ReadTrace& trace = response.trace;
  absl::StrAppend(&text, "* trace attempts=", trace.attempts,
                  " hedged=", Bool(trace.hedged),
                  " hedge_won=", Bool(trace.hedge_won),
                  " replica=", trace.replica,
                  " latency=", absl::FormatDuration(trace.latency), "\n");
  return text;
}

std::string FormatError(const absl::Status& status) {
  return absl::StrCat(
      "tailgate_read: ", absl::StatusCodeToString(status.code()), ": ",
      OneLine(status.message()), "\n");
}

std::string FormatManyItem(const ReadManyItem& item, absl::string_view path,
                           bool trace, bool body) {
  if (!item.response.ok()) {
    const absl::Status& status = item.response.status();
    return absl::StrCat(item.index, " ",
                        absl::StatusCodeToString(status.code()), " - ", path,
                        " ", OneLine(status.message()), "\n");
  }
  const ReadResponse& response = *item.response;
  std::string text = absl::StrCat(item.index, " ", response.status, " ",
                                  response.body.size(), " ", path);
  if (trace) {
    absl::StrAppend(&text, " attempts=", response.trace.attempts,
                    " hedged=", Bool(response.trace.hedged),
                    " hedge_won=", Bool(response.trace.hedge_won),
                    " replica=", response.trace.replica,
                    " latency=", absl::FormatDuration(response.trace.latency));
  }
  if (body) {
    absl::StrAppend(&text, " body=\"", absl::CHexEscape(response.body), "\"");
  }
  text.push_back('\n');
  return text;
}

std::string FormatStatsTable(const SidecarStats& stats) {
  std::string text;
  for (const auto& [name, value] : Counters(stats, &PlainNumber)) {
    absl::StrAppendFormat(&text, "%-18s %s\n", name, value);
  }
  if (!stats.replicas.empty()) {
    size_t url_width = 7;  // "REPLICA"
    for (const ReplicaStats& replica : stats.replicas) {
      url_width = std::max(url_width, replica.url.size());
    }
    const int width = static_cast<int>(url_width);
    absl::StrAppendFormat(&text, "\n%-*s  %-11s  %10s  %10s  %10s  %9s\n",
                          width, "REPLICA", "STATE", "GENERATION", "ATTEMPTS",
                          "FAILURES", "IN_FLIGHT");
    for (const ReplicaStats& replica : stats.replicas) {
      absl::StrAppendFormat(&text, "%-*s  %-11s  %10d  %10d  %10d  %9d\n",
                            width, replica.url,
                            replica.degraded ? "degraded"
                                             : ReplicaStateName(replica.state),
                            replica.generation, replica.attempts,
                            replica.failures, replica.in_flight);
    }
    absl::StrAppend(&text, "\n", HealthTable(stats.replicas, width));
  }
  if (!stats.upstreams.empty()) {
    absl::StrAppend(&text, "\n", GiveUpTable(stats));
  }
  return text;
}

std::string FormatStatsJson(const SidecarStats& stats) {
  std::string json = "{";
  for (const auto& [name, value] : Counters(stats, &JsonNumber)) {
    absl::StrAppend(&json, "\"", name, "\":", value, ",");
  }
  json += "\"replicas\":[";
  for (size_t i = 0; i < stats.replicas.size(); ++i) {
    const ReplicaStats& replica = stats.replicas[i];
    absl::StrAppend(
        &json, i == 0 ? "" : ",", "{\"url\":", JsonString(replica.url),
        ",\"circuit\":", JsonString(CircuitStateName(replica.circuit)),
        ",\"generation\":", replica.generation,
        ",\"attempts\":", replica.attempts, ",\"failures\":", replica.failures,
        ",\"in_flight\":", replica.in_flight, ",", ReplicaHealthJson(replica),
        "}");
  }
  json += "],\"upstreams\":[";
  for (size_t i = 0; i < stats.upstreams.size(); ++i) {
    const UpstreamStats& upstream = stats.upstreams[i];
    absl::StrAppend(&json, i == 0 ? "" : ",",
                    "{\"name\":", JsonString(upstream.name),
                    ",\"give_up_after\":", JsonDuration(upstream.give_up_after),
                    ",\"give_up_learned\":", Bool(upstream.give_up_learned),
                    ",\"give_up_fallbacks\":", upstream.give_up_fallbacks, "}");
  }
  json += "]}\n";
  return json;
}

}  // namespace tailgate::cli
