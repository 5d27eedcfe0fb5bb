// Reading a counter out of the sidecar's Prometheus text exposition
// (Admin.GetMetrics), for the figures Admin.GetStats does not carry, such
// as attempts by kind or skipped hedges by reason.
//
// Example:
//   // tailgate_attempts_total{replica="http://a:80",kind="fallback"} 3
//   double fallbacks =
//       SumSamples(text, "tailgate_attempts_total", "kind=\"fallback\"");
//
// Thread safety: pure function.

#ifndef TAILGATE_EXPERIMENT_MEASURE_PROMETHEUS_TEXT_H_
#define TAILGATE_EXPERIMENT_MEASURE_PROMETHEUS_TEXT_H_

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tailgate::experiment {

// The sum of the samples of metric `name` (exactly that name: not its
// _bucket or _sum series) whose labels contain `label` as written, e.g.
// `kind="fallback"`; every sample of `name` when `label` is empty. Comment
// lines and samples whose value does not parse are skipped; 0 when none
// matches.
double SumSamples(absl::string_view text, absl::string_view name,
                  absl::string_view label = "");

// The same for the samples whose labels contain every one of `labels`,
// in any order, e.g. {"replica=\"http://a:80\"", "kind=\"primary\""}.
double SumSamplesWithLabels(absl::string_view text, absl::string_view name,
                            absl::Span<const absl::string_view> labels);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_MEASURE_PROMETHEUS_TEXT_H_
