#include "hedge/transport/curl/timer_heap.h"

#include <utility>

namespace tailgate::hedge::transport {

void TimerHeap::Arm(absl::Time at, uint64_t key) {
  auto it = position_.find(key);
  if (it != position_.end()) {
    const size_t index = it->second;
    const absl::Time old = heap_[index].at;
    heap_[index].at = at;
    if (at < old) {
      SiftUp(index);
    } else {
      SiftDown(index);
    }
    return;
  }
  heap_.push_back(Entry{at, key});
  position_[key] = heap_.size() - 1;
  SiftUp(heap_.size() - 1);
}

bool TimerHeap::Cancel(uint64_t key) {
  auto it = position_.find(key);
  if (it == position_.end()) return false;
  RemoveAt(it->second);
  return true;
}

absl::Time TimerHeap::next() const {
  return heap_.empty() ? absl::InfiniteFuture() : heap_.front().at;
}

std::optional<uint64_t> TimerHeap::PopDue(absl::Time now) {
  if (heap_.empty() || heap_.front().at > now) return std::nullopt;
  const uint64_t key = heap_.front().key;
  RemoveAt(0);
  return key;
}

void TimerHeap::Place(size_t index, Entry entry) {
  position_[entry.key] = index;
  heap_[index] = entry;
}

void TimerHeap::SiftUp(size_t index) {
  Entry entry = heap_[index];
  while (index > 0) {
    const size_t parent = (index - 1) / 2;
    if (!(entry.at < heap_[parent].at)) break;
    Place(index, heap_[parent]);
    index = parent;
  }
  Place(index, entry);
}

void TimerHeap::SiftDown(size_t index) {
  Entry entry = heap_[index];
  const size_t count = heap_.size();
  while (true) {
    size_t child = 2 * index + 1;
    if (child >= count) break;
    if (child + 1 < count && heap_[child + 1].at < heap_[child].at) ++child;
    if (!(heap_[child].at < entry.at)) break;
    Place(index, heap_[child]);
    index = child;
  }
  Place(index, entry);
}

void TimerHeap::RemoveAt(size_t index) {
  position_.erase(heap_[index].key);
  const size_t last = heap_.size() - 1;
  if (index == last) {
    heap_.pop_back();
    return;
  }
  const Entry moved = heap_[last];
  heap_.pop_back();
  const absl::Time removed_at = heap_[index].at;
  Place(index, moved);
  if (moved.at < removed_at) {
    SiftUp(index);
  } else {
    SiftDown(index);
  }
}

}  // namespace tailgate::hedge::transport
