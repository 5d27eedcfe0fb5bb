#include "experiment/load/closed_loop.h"

#include <chrono>

#include "absl/status/status.h"
#include "experiment/load/read_outcome.h"

namespace tailgate::experiment {

absl::StatusOr<std::vector<SequentialRead>> RunSequentialReads(
    Client& client, int64_t count,
    const std::function<std::string(int64_t)>& path, Progress& progress,
    int64_t first, const std::string& tenant) {
  std::vector<SequentialRead> reads;
  reads.reserve(count);
  ReadRequest request;
  request.tenant = tenant;
  for (int64_t i = first; i < first + count; ++i) {
    request.path = path(i);
    const auto start = std::chrono::steady_clock::now();
    const absl::StatusOr<ReadResponse> response = client.Read(request);
    const absl::Duration latency = Since(start);
    if (Classify(response) != ReadOutcome::kOk) {
      return absl::InternalError(DescribeFailure(request.path, response));
    }
    reads.push_back({latency, response->trace.latency, response->trace.hedged});
    progress.Update(i + 1);
  }
  return reads;
}

}  // namespace tailgate::experiment
