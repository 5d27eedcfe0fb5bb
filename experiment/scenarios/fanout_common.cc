#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "experiment/config/workload.h"
#include "experiment/load/progress.h"
#include "experiment/scenarios/fanout_parts.h"

namespace tailgate::experiment {

constexpr absl::Duration kConnectTimeout = absl::Seconds(5);

void BatchSeries::Sort() {
  std::sort(batch_latencies.begin(), batch_latencies.end());
  std::sort(key_latencies.begin(), key_latencies.end());
}

absl::StatusOr<BatchSeries> RunBatchSeries(
    BatchTarget& target, const std::string& label, int64_t batches,
    const std::function<std::vector<std::string>(int64_t)>& paths_of) {
  BatchSeries series;
  Progress progress(label, batches);
  for (int64_t i = 0; i < batches; ++i) {
    const std::vector<std::string> paths = paths_of(i);
    BatchResult result = target.ReadBatch(paths);
    if (result.failed > 0) {
      return absl::InternalError(absl::StrCat(
          label, ": ", result.failed, " of ", paths.size(), " keys of batch ",
          i, " failed, the first with ", result.first_error));
    }
    series.batch_latencies.push_back(result.latency);
    series.key_latencies.insert(series.key_latencies.end(),
                                result.key_latencies.begin(),
                                result.key_latencies.end());
    series.keys += static_cast<int64_t>(paths.size());
    series.item_attempts += result.attempts;
    progress.Update(i + 1);
  }
  return series;
}

absl::Status WarmUpTarget(BatchTarget& target, int keys) {
  uint64_t n = 0;
  for (int batch = 0; batch < kFanoutWarmupBatches; ++batch) {
    std::vector<std::string> paths;
    for (int k = 0; k < keys; ++k) paths.push_back(WarmupPath(n++));
    const BatchResult result = target.ReadBatch(paths);
    if (result.failed > 0) {
      return absl::InternalError(
          absl::StrCat("a warm-up batch had ", result.failed,
                       " failed keys, the first: ", result.first_error));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> ConnectChannel(
    const std::string& address) {
  grpc::ChannelArguments arguments;
  // A channel of its own, not shared with the session's client.
  arguments.SetInt("grpc.fanout_channel", 1);
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
      address, grpc::InsecureChannelCredentials(), arguments);
  if (!channel->WaitForConnected(
          absl::ToChronoTime(absl::Now() + kConnectTimeout))) {
    return absl::UnavailableError(
        absl::StrCat("cannot connect to the sidecar at ", address));
  }
  return channel;
}

}  // namespace tailgate::experiment
