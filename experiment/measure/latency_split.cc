#include "experiment/measure/latency_split.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "experiment/report/report.h"

namespace tailgate::experiment {
namespace {

LatencySummary SummarizeUnsorted(std::vector<absl::Duration> latencies) {
  std::sort(latencies.begin(), latencies.end());
  return Summarize(latencies);
}

}  // namespace

LatencySplit SplitLatencies(absl::Span<const SequentialRead> reads) {
  std::vector<absl::Duration> hedged;
  std::vector<absl::Duration> hedged_sidecar;
  std::vector<absl::Duration> round_trip;
  round_trip.reserve(reads.size());
  for (const SequentialRead& read : reads) {
    round_trip.push_back(
        std::max(read.latency - read.sidecar_latency, absl::ZeroDuration()));
    if (!read.hedged) continue;
    hedged.push_back(read.latency);
    hedged_sidecar.push_back(read.sidecar_latency);
  }
  return {SummarizeUnsorted(std::move(hedged)),
          SummarizeUnsorted(std::move(hedged_sidecar)),
          SummarizeUnsorted(std::move(round_trip))};
}

void AddLatencySplitFields(const LatencySplit& split, JsonObject& line) {
  AddLatencyFields(split.hedged, line, "hedged_");
  AddLatencyFields(split.hedged_sidecar, line, "hedged_sidecar_");
  AddLatencyFields(split.grpc_round_trip, line, "grpc_round_trip_");
}

}  // namespace tailgate::experiment
