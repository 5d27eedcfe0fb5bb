#include "hedge/replica_picker.h"

#include "absl/base/macros.h"

namespace tailgate::hedge {

ReplicaPicker::ReplicaPicker(absl::Span<CircuitBreaker* const> breakers)
    : breakers_(breakers.begin(), breakers.end()) {
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
    if (breakers_[(exclude + i) % n]->IsEligible(now)) return true;
  }
  return false;
}

}  // namespace tailgate::hedge
