#include "experiment/replicas/replica_pair.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tailgate::experiment {
namespace {

testing::Handler WorkloadHandler(StragglerMix mix, ReplicaName replica) {
  return [mix, replica](const testing::ReplicaRequest& request) {
    testing::ReplicaResponse response;
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
    StragglerMix mix, ReplicaName replica, int port) {
  testing::ReplicaOptions options;
  options.port = port;
  // Long runs would otherwise keep every request in memory.
  options.record_requests = false;
  return testing::Replica::Start(WorkloadHandler(mix, replica), options);
}

absl::StatusOr<std::unique_ptr<ReplicaPair>> ReplicaPair::Start(
    StragglerMix mix) {
  absl::StatusOr<std::unique_ptr<testing::Replica>> a =
      StartWorkloadReplica(mix, ReplicaName::kA);
  if (!a.ok()) return a.status();
  absl::StatusOr<std::unique_ptr<testing::Replica>> b =
      StartWorkloadReplica(mix, ReplicaName::kB);
  if (!b.ok()) return b.status();
  return std::unique_ptr<ReplicaPair>(
      new ReplicaPair(*std::move(a), *std::move(b)));
}

std::string ReplicaPair::backends() const {
  return absl::StrCat(a_->url(), ",", b_->url());
}

std::string ReplicaPair::url(ReplicaName replica) const {
  return replica == ReplicaName::kA ? a_->url() : b_->url();
}

}  // namespace tailgate::experiment
