#include "server/read/drain.h"

namespace tailgate::server {

bool DrainGate::TryEnter() {
  absl::MutexLock lock(&mu_);
  // Read under mu_: StartDrain sets the flag under mu_, so no read can slip
  // in after WaitForIdle has seen zero.
  if (draining_.load(std::memory_order_relaxed)) return false;
  ++in_flight_;
  return true;
}

void DrainGate::Exit() {
  absl::MutexLock lock(&mu_);
  --in_flight_;
}

void DrainGate::StartDrain() {
  absl::MutexLock lock(&mu_);
  draining_.store(true, std::memory_order_release);
}

int64_t DrainGate::in_flight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

int64_t DrainGate::WaitForIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return in_flight_ == 0;
  };
  mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
  return in_flight_;
}

}  // namespace tailgate::server
