// ReplicaPicker: chooses the replica for each attempt.
//
// The primary's scan starts one position further for every read (rotation),
// and takes the first replica whose circuit grants a ticket. The alternate's
// scan starts after the primary's replica and never returns it. A retired
// replica (one that left its set while reads of the old set are in flight)
// is never picked again.
//
// Thread safety: safe from any thread. The breakers are not owned and must
// outlive the picker.

#ifndef TAILGATE_HEDGE_REPLICA_PICKER_H_
#define TAILGATE_HEDGE_REPLICA_PICKER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hedge/circuit_breaker.h"

namespace tailgate::hedge {

struct ReplicaPick {
  size_t replica = 0;  // index into the breakers given at construction
  CircuitTicket ticket;
};

class ReplicaPicker {
 public:
  // REQUIRES: !breakers.empty(); no null entries.
  explicit ReplicaPicker(absl::Span<CircuitBreaker* const> breakers);

  ReplicaPicker(const ReplicaPicker&) = delete;
  ReplicaPicker& operator=(const ReplicaPicker&) = delete;

  // Advances the rotation, then scans for a replica that grants a ticket.
  // nullopt when every circuit refuses.
  std::optional<ReplicaPick> PickPrimary(absl::Time now);

  // A replica other than `exclude` that grants a ticket, or nullopt; the
  // scan starts at the replica after `exclude`.
  // REQUIRES: exclude < size()
  std::optional<ReplicaPick> PickAlternate(size_t exclude, absl::Time now);

  // True when PickAlternate(exclude, now) would succeed if nothing else
  // took a ticket in between; takes no ticket.
  // REQUIRES: exclude < size()
  bool HasAlternate(size_t exclude, absl::Time now) const;

  // No scan returns `replica` from now on; attempts already on it go on.
  // REQUIRES: replica < size()
  void Retire(size_t replica);

  size_t size() const { return breakers_.size(); }
  CircuitBreaker& breaker(size_t replica) const { return *breakers_[replica]; }

 private:
  bool Retired(size_t replica) const {
    return retired_[replica].load(std::memory_order_acquire);
  }

  const std::vector<CircuitBreaker*> breakers_;
  const std::unique_ptr<std::atomic<bool>[]> retired_;  // by replica
  std::atomic<uint64_t> next_start_{0};
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_REPLICA_PICKER_H_
