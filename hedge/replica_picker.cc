#include "hedge/replica_picker.h"

#include "absl/base/macros.h"

namespace tailgate::hedge {

ReplicaPicker::ReplicaPicker(absl::Span<CircuitBreaker* const> breakers)
    : breakers_(breakers.begin(), breakers.end()),
      retired_(new std::atomic<bool>[breakers.size()]) {
  for (size_t i = 0; i < breakers_.size(); ++i) retired_[i] = false;
  ABSL_ASSERT(!breakers_.empty());
  for (const CircuitBreaker* breaker : breakers_) {
    ABSL_ASSERT(breaker != nullptr);
  }
}

std::optional<ReplicaPick> ReplicaPicker::PickPrimary(absl::Time now) {
  const size_t n = breakers_.size();
  const size_t start = next_start_.fetch_add(1, std::memory_order_relaxed) % n;
  for (size_t i = 0; i < n; ++i) {
    const size_t replica = (start + i) % n;
    if (Retired(replica)) continue;
    if (std::optional<CircuitTicket> ticket =
            breakers_[replica]->TryAcquire(now)) {
      return ReplicaPick{replica, *ticket};
    }
  }
  return std::nullopt;
}

std::optional<ReplicaPick> ReplicaPicker::PickAlternate(size_t exclude,
                                                        absl::Time now) {
  const size_t n = breakers_.size();
  for (size_t i = 1; i < n; ++i) {
    const size_t replica = (exclude + i) % n;
    if (Retired(replica)) continue;
    if (std::optional<CircuitTicket> ticket =
            breakers_[replica]->TryAcquire(now)) {
      return ReplicaPick{replica, *ticket};
    }
  }
  return std::nullopt;
}

bool ReplicaPicker::HasAlternate(size_t exclude, absl::Time now) const {
  const size_t n = breakers_.size();
  for (size_t i = 1; i < n; ++i) {
    const size_t replica = (exclude + i) % n;
    if (!Retired(replica) && breakers_[replica]->IsEligible(now)) return true;
  }
  return false;
}

void ReplicaPicker::Retire(size_t replica) {
  retired_[replica].store(true, std::memory_order_release);
}

}  // namespace tailgate::hedge
