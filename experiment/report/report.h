// The pieces of the experiment's JSON result lines that every scenario
// shares: the latency fields, the sidecar's counters over the measured
// phase, and the printing of a line on stdout.
//
// The "metrics" object is the difference of two Admin.GetStats snapshots,
// taken after the warm-up and after the measured reads, so that it counts
// the measured reads only ("in_flight" is the value at the end).
//
// Thread safety: pure functions, except PrintLine (stdout).

#ifndef TAILGATE_EXPERIMENT_REPORT_REPORT_H_
#define TAILGATE_EXPERIMENT_REPORT_REPORT_H_

#include "client/admin_client.h"
#include "experiment/report/json_line.h"
#include "experiment/report/percentiles.h"

namespace tailgate::experiment {

// Counters of `after` minus those of `before`; in_flight from `after`.
SidecarStats StatsDelta(const SidecarStats& before, const SidecarStats& after);

// attempts / requests; NaN (printed null) when no request was admitted.
double AttemptsPerRequest(const SidecarStats& delta);

// {"requests","rejected","attempts","hedges","hedge_wins","timeouts",
//  "backend_failures","in_flight"}: the seed's metrics object.
JsonObject MetricsJson(const SidecarStats& delta);

// p50_ms, p95_ms, p99_ms, p999_ms, max_ms (null without samples), samples;
// each key after `prefix` ("rejected_" gives rejected_p50_ms...).
void AddLatencyFields(const LatencySummary& summary, JsonObject& line,
                      absl::string_view prefix = "");

// Writes the line and a newline to stdout and flushes it.
void PrintLine(const JsonObject& line);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_REPORT_REPORT_H_
