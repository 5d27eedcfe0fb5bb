#include "client/text_output.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace tailgate::cli {
namespace {

absl::string_view Bool(bool value) { return value ? "true" : "false"; }

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
      absl::StrReplaceAll(status.message(), {{"\r", " "}, {"\n", " "}}), "\n");
}

std::string FormatStatsTable(const SidecarStats& stats) {
  std::string text;
  for (const auto& [name, value] : Counters(stats, &PlainNumber)) {
    absl::StrAppendFormat(&text, "%-18s %s\n", name, value);
  }
  if (stats.replicas.empty()) return text;
  size_t url_width = 7;  // "REPLICA"
  for (const ReplicaStats& replica : stats.replicas) {
    url_width = std::max(url_width, replica.url.size());
  }
  const int width = static_cast<int>(url_width);
  absl::StrAppendFormat(&text, "\n%-*s  %-9s  %10s  %10s  %10s  %9s\n", width,
                        "REPLICA", "CIRCUIT", "GENERATION", "ATTEMPTS",
                        "FAILURES", "IN_FLIGHT");
  for (const ReplicaStats& replica : stats.replicas) {
    absl::StrAppendFormat(&text, "%-*s  %-9s  %10d  %10d  %10d  %9d\n", width,
                          replica.url, CircuitStateName(replica.circuit),
                          replica.generation, replica.attempts,
                          replica.failures, replica.in_flight);
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
        ",\"in_flight\":", replica.in_flight, "}");
  }
  json += "]}\n";
  return json;
}

}  // namespace tailgate::cli
