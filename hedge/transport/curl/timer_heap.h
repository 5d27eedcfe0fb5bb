// TimerHeap: pending timers by due time, each named by a unique key, with
// cancellation in O(log n).
//
// A read arms a hedge timer and a deadline timer and usually finishes long
// before either is due. Cancelling them when the read finishes keeps the
// loop from waking up for timers nobody waits for, and keeps the heap as
// small as the number of reads in flight.
//
// Not thread-safe: owned by one thread (the engine loop's).

#ifndef TAILGATE_HEDGE_TRANSPORT_CURL_TIMER_HEAP_H_
#define TAILGATE_HEDGE_TRANSPORT_CURL_TIMER_HEAP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"

namespace tailgate::hedge::transport {

class TimerHeap {
 public:
  // Arms timer `key` for `at`; re-arming a pending key moves it.
  void Arm(absl::Time at, uint64_t key);

  // Returns false when `key` is not pending (fired, cancelled or unknown).
  bool Cancel(uint64_t key);

  // The earliest due time, or InfiniteFuture when nothing is pending.
  absl::Time next() const;

  // Removes and returns the key of the earliest timer due at or before
  // `now`, if any. Timers due at the same time pop in no particular order.
  std::optional<uint64_t> PopDue(absl::Time now);

  size_t size() const { return heap_.size(); }
  bool empty() const { return heap_.empty(); }

 private:
  struct Entry {
    absl::Time at;
    uint64_t key;
  };

  void Place(size_t index, Entry entry);
  void SiftUp(size_t index);
  void SiftDown(size_t index);
  void RemoveAt(size_t index);

  std::vector<Entry> heap_;                         // min-heap on `at`
  absl::flat_hash_map<uint64_t, size_t> position_;  // key -> index in heap_
};

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_CURL_TIMER_HEAP_H_
