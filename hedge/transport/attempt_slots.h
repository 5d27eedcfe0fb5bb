// AttemptSlotPool: reuses AttemptSlots (and with them their libcurl easy
// handles, whose buffers and DNS cache survive curl_easy_reset) from one
// attempt to the next, instead of a handle per attempt. The pool grows to
// the most attempts ever in flight at once; Shrink gives back the free
// slots beyond a reserve once the engine is idle, so one saturating burst
// does not keep a handle and its buffers per attempt of the burst.
//
// Thread safety: loop thread only.

#ifndef TAILGATE_HEDGE_TRANSPORT_ATTEMPT_SLOTS_H_
#define TAILGATE_HEDGE_TRANSPORT_ATTEMPT_SLOTS_H_

#include <memory>
#include <vector>

#include "hedge/transport/read_state.h"

namespace tailgate::hedge::transport {

class AttemptSlotPool {
 public:
  // A free slot, made if none is. It serves `*read`'s attempt `index` from
  // `started`.
  AttemptSlot* Take(Read* read, int index, absl::Time started);
  // Gives `slot` back. REQUIRES: it is not in the multi handle.
  void Release(AttemptSlot* slot);
  // Destroys free slots (easy handles, their buffers and DNS cache) until
  // at most `keep` are free. Slots in use are untouched.
  void Shrink(size_t keep);

  size_t size() const { return all_.size(); }
  size_t free() const { return free_.size(); }

 private:
  std::vector<std::unique_ptr<AttemptSlot>> all_;  // owns every slot
  std::vector<AttemptSlot*> free_;
};

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_ATTEMPT_SLOTS_H_
