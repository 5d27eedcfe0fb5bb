// Where a sequential run's time went: the client-side latency of the reads
// the sidecar hedged, the sidecar's own latency of those reads (its
// ReadTrace, admission to answer), and the gRPC round trip of every read
// (client latency minus the sidecar's). The seed scenario's hedged p99 is
// made of hedged reads, so these fields say how much of it is the sidecar
// and how much the call to it.
//
// Thread safety: pure functions.

#ifndef TAILGATE_EXPERIMENT_MEASURE_LATENCY_SPLIT_H_
#define TAILGATE_EXPERIMENT_MEASURE_LATENCY_SPLIT_H_

#include "absl/types/span.h"
#include "experiment/load/closed_loop.h"
#include "experiment/report/json_line.h"
#include "experiment/report/percentiles.h"

namespace tailgate::experiment {

struct LatencySplit {
  LatencySummary hedged;           // client latency, hedged reads only
  LatencySummary hedged_sidecar;   // sidecar latency, the same reads
  LatencySummary grpc_round_trip;  // client minus sidecar, every read
};

// A read whose sidecar latency exceeds its client latency (not possible on
// one machine's monotonic clocks, but not trusted) counts a zero round trip.
LatencySplit SplitLatencies(absl::Span<const SequentialRead> reads);

// Adds the three summaries with the prefixes "hedged_", "hedged_sidecar_"
// and "grpc_round_trip_" (see AddLatencyFields).
void AddLatencySplitFields(const LatencySplit& split, JsonObject& line);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_MEASURE_LATENCY_SPLIT_H_
