#include "experiment/replicas/replica_pair.h"

#include <atomic>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tailgate::experiment {
namespace {

testing::Handler WorkloadHandler(StragglerMix mix, ReplicaName replica,
                                 std::atomic<int64_t>* hot_reads) {
  return [mix, replica, hot_reads](const testing::ReplicaRequest& request) {
    testing::ReplicaResponse response;
    if (hot_reads != nullptr && absl::StartsWith(request.uri, "/hot?")) {
      hot_reads->fetch_add(1, std::memory_order_relaxed);
    }
    const std::optional<absl::Duration> delay =
        DelayForTarget(mix, replica, request.uri);
    if (!delay.has_value()) {
      response.status = 404;
      response.body = "no such read";
      return response;
    }
    response.delay = *delay;
    response.body = std::string(kReplicaBody);
    return response;
  };
}

}  // namespace

absl::StatusOr<std::unique_ptr<testing::Replica>> StartWorkloadReplica(
    StragglerMix mix, ReplicaName replica, int port,
    std::atomic<int64_t>* hot_reads) {
  testing::ReplicaOptions options;
  options.port = port;
  // Long runs would otherwise keep every request in memory.
  options.record_requests = false;
  return testing::Replica::Start(WorkloadHandler(mix, replica, hot_reads),
                                 options);
}

absl::StatusOr<std::unique_ptr<ReplicaPair>> ReplicaPair::Start(
    StragglerMix mix) {
  auto hot_reads = std::make_unique<std::atomic<int64_t>>(0);
  absl::StatusOr<std::unique_ptr<testing::Replica>> a =
      StartWorkloadReplica(mix, ReplicaName::kA, 0, hot_reads.get());
  if (!a.ok()) return a.status();
  absl::StatusOr<std::unique_ptr<testing::Replica>> b =
      StartWorkloadReplica(mix, ReplicaName::kB, 0, hot_reads.get());
  if (!b.ok()) return b.status();
  return std::unique_ptr<ReplicaPair>(
      new ReplicaPair(std::move(hot_reads), *std::move(a), *std::move(b)));
}

std::string ReplicaPair::backends() const {
  return absl::StrCat(a_->url(), ",", b_->url());
}

std::string ReplicaPair::url(ReplicaName replica) const {
  return replica == ReplicaName::kA ? a_->url() : b_->url();
}

int64_t ReplicaPair::hot_reads_received() const {
  return hot_reads_->load(std::memory_order_relaxed);
}

}  // namespace tailgate::experiment
