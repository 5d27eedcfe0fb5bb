#include "server/services/serving_state.h"

#include <utility>

namespace tailgate::server::services {

ServingState::Subscription& ServingState::Subscription::operator=(
    Subscription&& other) noexcept {
  if (this != &other) {
    Reset();
    state_ = std::exchange(other.state_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

void ServingState::Subscription::Reset() {
  if (state_ != nullptr) std::exchange(state_, nullptr)->Unsubscribe(id_);
}

void ServingState::Set(bool serving) {
  hedge::MutexLock lock(&mu_);
  if (serving_.exchange(serving, std::memory_order_acq_rel) == serving) return;
  for (auto& [id, listener] : listeners_) listener(serving);
}

ServingState::Subscription ServingState::Subscribe(Listener listener) {
  hedge::MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  listener(serving_.load(std::memory_order_relaxed));
  listeners_.emplace(id, std::move(listener));
  return Subscription(this, id);
}

void ServingState::Unsubscribe(uint64_t id) {
  hedge::MutexLock lock(&mu_);
  listeners_.erase(id);
}

}  // namespace tailgate::server::services
