#include "experiment/replica_pair.h"

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

absl::StatusOr<std::unique_ptr<ReplicaPair>> ReplicaPair::Start(
    StragglerMix mix) {
  // Long runs would otherwise keep every request in memory.
  testing::ReplicaOptions options;
  options.record_requests = false;
  absl::StatusOr<std::unique_ptr<testing::Replica>> a =
      testing::Replica::Start(WorkloadHandler(mix, ReplicaName::kA), options);
  if (!a.ok()) return a.status();
  absl::StatusOr<std::unique_ptr<testing::Replica>> b =
      testing::Replica::Start(WorkloadHandler(mix, ReplicaName::kB), options);
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
