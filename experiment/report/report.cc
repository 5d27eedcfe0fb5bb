#include "experiment/report/report.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tailgate::experiment {

SidecarStats StatsDelta(const SidecarStats& before, const SidecarStats& after) {
  SidecarStats delta = after;
  delta.requests -= before.requests;
  delta.rejected -= before.rejected;
  delta.attempts -= before.attempts;
  delta.hedges -= before.hedges;
  delta.hedge_wins -= before.hedge_wins;
  delta.timeouts -= before.timeouts;
  delta.backend_failures -= before.backend_failures;
  delta.amplification = AttemptsPerRequest(delta);
  return delta;
}

double AttemptsPerRequest(const SidecarStats& delta) {
  if (delta.requests == 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(delta.attempts) /
         static_cast<double>(delta.requests);
}

JsonObject MetricsJson(const SidecarStats& delta) {
  JsonObject metrics;
  metrics.AddUint("requests", delta.requests)
      .AddUint("rejected", delta.rejected)
      .AddUint("attempts", delta.attempts)
      .AddUint("hedges", delta.hedges)
      .AddUint("hedge_wins", delta.hedge_wins)
      .AddUint("timeouts", delta.timeouts)
      .AddUint("backend_failures", delta.backend_failures)
      .AddInt("in_flight", delta.in_flight);
  return metrics;
}

void AddLatencyFields(const LatencySummary& summary, JsonObject& line,
                      absl::string_view prefix) {
  const std::pair<const char*, absl::Duration> fields[] = {
      {"p50_ms", summary.p50}, {"p95_ms", summary.p95},
      {"p99_ms", summary.p99}, {"p999_ms", summary.p999},
      {"max_ms", summary.max},
  };
  for (const auto& [key, value] : fields) {
    const std::string name = absl::StrCat(prefix, key);
    if (summary.samples == 0) {
      line.AddNull(name);
    } else {
      line.AddMillis(name, value);
    }
  }
  line.AddUint(absl::StrCat(prefix, "samples"), summary.samples);
}

void PrintLine(const JsonObject& line) {
  const std::string text = line.ToString() + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace tailgate::experiment
