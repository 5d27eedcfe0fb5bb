// The Go gateway's counters, out of its JSON /metrics page on its admin
// listener: {"requests":N,"rejected":N,"attempts":N,"hedges":N,...}.
//
// Thread safety: pure function.

#ifndef TAILGATE_EXPERIMENT_MEASURE_GATEWAY_METRICS_H_
#define TAILGATE_EXPERIMENT_MEASURE_GATEWAY_METRICS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tailgate::experiment {

struct GatewayCounters {
  uint64_t requests = 0;  // reads admitted
  uint64_t attempts = 0;  // upstream attempts, hedges included
};

// INVALID_ARGUMENT when either counter is missing or not a whole number.
absl::StatusOr<GatewayCounters> ParseGatewayMetrics(absl::string_view json);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_MEASURE_GATEWAY_METRICS_H_
