#include "server/read/response_memory.h"

namespace tailgate::server {

ResponseMemory::Admission ResponseMemory::TryAdmit() {
  const int64_t held = held_.load(std::memory_order_relaxed);
  if (held >= max_bytes_ || held > max_bytes_ - admit_room_) {
    return Admission::kBufferFull;
  }
  int64_t calls = calls_.load(std::memory_order_relaxed);
  do {
    if (calls >= max_calls_) return Admission::kTooManyCalls;
  } while (!calls_.compare_exchange_weak(calls, calls + 1,
                                         std::memory_order_relaxed));
  return Admission::kAdmitted;
}

bool ResponseMemory::TryHold(int64_t bytes) {
  int64_t held = held_.load(std::memory_order_relaxed);
  do {
    if (held + bytes > max_bytes_) return false;
  } while (!held_.compare_exchange_weak(held, held + bytes,
                                        std::memory_order_relaxed));
  int64_t peak = peak_held_.load(std::memory_order_relaxed);
  while (held + bytes > peak &&
         !peak_held_.compare_exchange_weak(peak, held + bytes,
                                           std::memory_order_relaxed)) {
  }
  return true;
}

void ResponseMemory::Done(int64_t held) {
  Unhold(held);
  calls_.fetch_sub(1, std::memory_order_relaxed);
}

void ResponseMemory::Unhold(int64_t held) {
  if (held > 0) held_.fetch_sub(held, std::memory_order_relaxed);
}

}  // namespace tailgate::server
