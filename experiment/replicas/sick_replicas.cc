#include "experiment/replicas/sick_replicas.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_join.h"
#include "experiment/config/workload.h"

namespace tailgate::experiment {
namespace {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

testing::ReplicaResponse Answer(absl::Duration delay) {
  testing::ReplicaResponse response;
  response.body = std::string(kReplicaBody);
  response.delay = delay;
  return response;
}

testing::ReplicaResponse Hang() {
  testing::ReplicaResponse response;
  response.fault = testing::ReplicaResponse::Fault::kHang;
  return response;
}

absl::StatusOr<std::unique_ptr<testing::Replica>> StartReplica(
    testing::Handler handler) {
  testing::ReplicaOptions options;
  options.record_requests = false;  // counted, not kept
  return testing::Replica::Start(std::move(handler), options);
}

}  // namespace

testing::ReplicaResponse SickResponse(SickKind kind, uint64_t request_id,
                                      bool healed) {
  switch (kind) {
    case SickKind::kHang:
      return Hang();
    case SickKind::kGray:
      return request_id % 2 == 1 ? Hang() : Answer(kHealthyReplicaDelay);
    case SickKind::kSlow:
      return Answer(kSlowReplicaDelay);
    case SickKind::kHeal:
      return healed ? Answer(kHealthyReplicaDelay) : Hang();
  }
  return Hang();
}

absl::StatusOr<std::unique_ptr<SickReplicaSet>> SickReplicaSet::Start(
    SickKind kind, int replicas) {
  std::unique_ptr<SickReplicaSet> set(new SickReplicaSet());
  for (int i = 0; i + 1 < replicas; ++i) {
    absl::StatusOr<std::unique_ptr<testing::Replica>> healthy =
        StartReplica(testing::Always(Answer(kHealthyReplicaDelay)));
    if (!healthy.ok()) return healthy.status();
    set->replicas_.push_back(*std::move(healthy));
  }
  std::atomic<int64_t>* heal_at_ns = &set->heal_at_ns_;
  absl::StatusOr<std::unique_ptr<testing::Replica>> sick =
      StartReplica([kind, heal_at_ns](const testing::ReplicaRequest& request) {
        const bool healed = SteadyNowNs() >= heal_at_ns->load();
        return SickResponse(kind, request.id, healed);
      });
  if (!sick.ok()) return sick.status();
  set->replicas_.push_back(*std::move(sick));
  return set;
}

std::vector<std::string> SickReplicaSet::urls() const {
  std::vector<std::string> urls;
  for (const auto& replica : replicas_) urls.push_back(replica->url());
  return urls;
}

std::string SickReplicaSet::backends() const {
  return absl::StrJoin(urls(), ",");
}

void SickReplicaSet::StartCase() {
  heal_at_ns_.store(SteadyNowNs() + absl::ToInt64Nanoseconds(kHealAfter));
}

std::vector<int64_t> SickReplicaSet::RequestsReceived() const {
  std::vector<int64_t> received;
  for (const auto& replica : replicas_) {
    received.push_back(replica->requests_received());
  }
  return received;
}

}  // namespace tailgate::experiment
