#include "experiment/replicas/flapping_replica.h"

#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace tailgate::experiment {

absl::StatusOr<std::unique_ptr<FlappingReplica>> FlappingReplica::Start(
    Factory factory) {
  absl::StatusOr<std::unique_ptr<testing::Replica>> replica = factory(0);
  if (!replica.ok()) return replica.status();
  return std::unique_ptr<FlappingReplica>(
      new FlappingReplica(std::move(factory), *std::move(replica)));
}

FlappingReplica::FlappingReplica(Factory factory,
                                 std::unique_ptr<testing::Replica> replica)
    : factory_(std::move(factory)),
      port_(replica->port()),
      url_(replica->url()),
      replica_(std::move(replica)) {}

FlappingReplica::~FlappingReplica() {
  if (flapper_.joinable()) StopFlapping().IgnoreError();
}

void FlappingReplica::StartFlapping(absl::Duration up, absl::Duration down) {
  assert(!flapper_.joinable());
  count_ = {};
  flapping_since_ = absl::Now();
  stop_ = std::make_unique<absl::Notification>();
  flapper_ = std::thread([this, up, down] { Flap(up, down); });
}

absl::StatusOr<FlapCount> FlappingReplica::StopFlapping() {
  assert(flapper_.joinable());
  stop_->Notify();
  flapper_.join();
  if (!restart_error_.ok()) return restart_error_;
  if (replica_ == nullptr) {
    absl::Status restarted = Restart();
    if (!restarted.ok()) return restarted;
  }
  return count_;
}

void FlappingReplica::Flap(absl::Duration up, absl::Duration down) {
  while (!stop_->WaitForNotificationWithTimeout(up)) {
    replica_.reset();
    ++count_.kills;
    count_.kill_times.push_back(absl::Now() - flapping_since_);
    if (stop_->WaitForNotificationWithTimeout(down)) return;  // Stop restarts
    absl::Status restarted = Restart();
    if (!restarted.ok()) {
      restart_error_ = restarted;
      return;
    }
  }
}

absl::Status FlappingReplica::Restart() {
  absl::StatusOr<std::unique_ptr<testing::Replica>> replica = factory_(port_);
  if (!replica.ok()) {
    return absl::Status(replica.status().code(),
                        absl::StrCat("restarting the replica on port ", port_,
                                     ": ", replica.status().message()));
  }
  replica_ = *std::move(replica);
  ++count_.restarts;
  count_.restart_times.push_back(absl::Now() - flapping_since_);
  return absl::OkStatus();
}

}  // namespace tailgate::experiment
