#include "server/testing/fake_engine.h"

#include <utility>

namespace tailgate::server::testing {

absl::StatusOr<uint64_t> FakeEngine::Submit(hedge::EngineRead read,
                                            hedge::ReadCallback done) {
  std::optional<absl::StatusOr<hedge::EngineResponse>> result;
  uint64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    submitted_.push_back(std::move(read));
    if (!refusal_.ok()) return refusal_;
    id = next_id_++;
    result = complete_on_submit_;
    if (!result.has_value()) pending_.emplace(id, std::move(done));
  }
  if (result.has_value()) done(*std::move(result));
  return id;
}

void FakeEngine::Cancel(uint64_t read_id) {
  {
    absl::MutexLock lock(&mu_);
    cancelled_.push_back(read_id);
  }
  Complete(read_id, hedge::ReadFailureStatus(hedge::ReadFailure::kCancelled,
                                             "read cancelled"));
}

hedge::EngineSnapshot FakeEngine::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return snapshot_;
}

void FakeEngine::RefuseWith(absl::Status status) {
  absl::MutexLock lock(&mu_);
  refusal_ = std::move(status);
}

void FakeEngine::CompleteOnSubmit(
    std::optional<absl::StatusOr<hedge::EngineResponse>> result) {
  absl::MutexLock lock(&mu_);
  complete_on_submit_ = std::move(result);
}

void FakeEngine::SetSnapshot(hedge::EngineSnapshot snapshot) {
  absl::MutexLock lock(&mu_);
  snapshot_ = std::move(snapshot);
}

bool FakeEngine::Complete(uint64_t read_id,
                          absl::StatusOr<hedge::EngineResponse> result) {
  hedge::ReadCallback done;
  {
    absl::MutexLock lock(&mu_);
    auto it = pending_.find(read_id);
    if (it == pending_.end()) return false;
    done = std::move(it->second);
    pending_.erase(it);
  }
  done(std::move(result));
  return true;
}

std::vector<hedge::EngineRead> FakeEngine::submitted() const {
  absl::MutexLock lock(&mu_);
  return submitted_;
}

std::vector<uint64_t> FakeEngine::cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

std::vector<uint64_t> FakeEngine::pending_ids() const {
  absl::MutexLock lock(&mu_);
  std::vector<uint64_t> ids;
  for (const auto& [id, done] : pending_) ids.push_back(id);
  return ids;
}

bool FakeEngine::WaitForSubmitted(size_t n, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return submitted_.size() >= n;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
}

absl::Status FakeEngine::SetUpstreams(
    std::vector<hedge::UpstreamConfig> upstreams) {
  absl::MutexLock lock(&mu_);
  upstream_updates_.push_back(std::move(upstreams));
  return absl::OkStatus();
}

std::vector<std::vector<hedge::UpstreamConfig>> FakeEngine::upstream_updates()
    const {
  absl::MutexLock lock(&mu_);
  return upstream_updates_;
}

}  // namespace tailgate::server::testing
