#include "hedge/transport/attempt_slots.h"

#include <algorithm>
#include <cassert>

#include "absl/container/flat_hash_set.h"

namespace tailgate::hedge::transport {

AttemptSlot* AttemptSlotPool::Take(Read* read, int index, absl::Time started) {
  AttemptSlot* slot;
  if (free_.empty()) {
    all_.push_back(std::make_unique<AttemptSlot>());
    slot = all_.back().get();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  slot->read = read;
  slot->index = index;
  slot->started = started;
  return slot;
}

void AttemptSlotPool::Release(AttemptSlot* slot) {
  assert(!slot->in_multi);
  slot->read = nullptr;
  slot->index = -1;
  slot->probe = nullptr;
  slot->http.ReleaseBody();
  free_.push_back(slot);
}

void AttemptSlotPool::Shrink(size_t keep) {
  if (free_.size() <= keep) return;
  // The most recently released stay: their handles are the warmest.
  const absl::flat_hash_set<AttemptSlot*> doomed(free_.begin(),
                                                 free_.end() - keep);
  free_.erase(free_.begin(), free_.end() - keep);
  all_.erase(std::remove_if(all_.begin(), all_.end(),
                            [&doomed](const std::unique_ptr<AttemptSlot>& s) {
                              return doomed.contains(s.get());
                            }),
             all_.end());
}

}  // namespace tailgate::hedge::transport
