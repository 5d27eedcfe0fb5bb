#include "hedge/transport/attempt_slots.h"

#include <cassert>

namespace tailgate::hedge::transport {

AttemptSlot* AttemptSlotPool::Take(Read& read, int index, absl::Time started) {
  AttemptSlot* slot;
  if (free_.empty()) {
    all_.push_back(std::make_unique<AttemptSlot>());
    slot = all_.back().get();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  slot->read = &read;
  slot->index = index;
  slot->started = started;
  return slot;
}

void AttemptSlotPool::Release(AttemptSlot* slot) {
  assert(!slot->in_multi);
  slot->read = nullptr;
  slot->index = -1;
  free_.push_back(slot);
}

}  // namespace tailgate::hedge::transport
