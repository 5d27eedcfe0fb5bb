// Rejections: reads the server refused before they reached the engine,
// counted by reason for GetStats and tailgate_rejected_total{reason}. The
// engine counts its own refusals for max_requests
// (EngineSnapshot::rejected_overloaded, reason "overloaded"), to which the
// read service's own (calls still sending their answer, ResponseMemory)
// add. Also: answers dropped after the engine produced them
// (tailgate_responses_dropped_total{reason}) and the bytes of answers
// waiting to be sent (tailgate_buffered_response_bytes), read from the
// ResponseMemory given to WatchResponseMemory.
//
// Thread safety: safe from any thread (relaxed atomics).

#ifndef TAILGATE_SERVER_READ_REJECTIONS_H_
#define TAILGATE_SERVER_READ_REJECTIONS_H_

#include <atomic>
#include <cstdint>

#include "server/read/response_memory.h"

namespace tailgate::server {

enum class RejectReason {
  kInvalidArgument,  // malformed descriptor
  kUnknownUpstream,  // `upstream` names no replica set
  kDraining,         // the server is shutting down
  kTooManyCalls,     // --max_requests calls are still running or sending
  kBufferFull,       // answers waiting to be sent fill --max_buffered_bytes
};

enum class DropReason {
  kBufferFull,   // the answer would take the buffered bytes over the cap
  kSendTimeout,  // the client did not take the answer within --send_timeout
};

struct RejectionSnapshot {
  uint64_t invalid_argument = 0;
  uint64_t unknown_upstream = 0;
  uint64_t draining = 0;
  uint64_t too_many_calls = 0;
  uint64_t buffer_full = 0;
  uint64_t dropped_buffer_full = 0;
  uint64_t dropped_send_timeout = 0;
  int64_t buffered_response_bytes = 0;  // now
};

class Rejections {
 public:
  void Add(RejectReason reason) {
    Counter(reason).fetch_add(1, std::memory_order_relaxed);
  }

  RejectionSnapshot Snapshot() const {
    RejectionSnapshot snapshot;
    snapshot.invalid_argument =
        invalid_argument_.load(std::memory_order_relaxed);
    snapshot.unknown_upstream =
        unknown_upstream_.load(std::memory_order_relaxed);
    snapshot.draining = draining_.load(std::memory_order_relaxed);
    snapshot.too_many_calls = too_many_calls_.load(std::memory_order_relaxed);
    snapshot.buffer_full = buffer_full_.load(std::memory_order_relaxed);
    snapshot.dropped_buffer_full =
        dropped_buffer_full_.load(std::memory_order_relaxed);
    snapshot.dropped_send_timeout =
        dropped_send_timeout_.load(std::memory_order_relaxed);
    const ResponseMemory* memory = memory_.load(std::memory_order_acquire);
    if (memory != nullptr) {
      snapshot.buffered_response_bytes = memory->held_bytes();
    }
    return snapshot;
  }

  void AddDropped(DropReason reason) {
    (reason == DropReason::kBufferFull ? dropped_buffer_full_
                                       : dropped_send_timeout_)
        .fetch_add(1, std::memory_order_relaxed);
  }

  // REQUIRES: `memory` outlives every later Snapshot.
  void WatchResponseMemory(const ResponseMemory* memory) {
    memory_.store(memory, std::memory_order_release);
  }

 private:
  std::atomic<uint64_t>& Counter(RejectReason reason) {
    switch (reason) {
      case RejectReason::kInvalidArgument:
        return invalid_argument_;
      case RejectReason::kUnknownUpstream:
        return unknown_upstream_;
      case RejectReason::kTooManyCalls:
        return too_many_calls_;
      case RejectReason::kBufferFull:
        return buffer_full_;
      case RejectReason::kDraining:
        break;
    }
    return draining_;
  }

  std::atomic<uint64_t> invalid_argument_{0};
  std::atomic<uint64_t> unknown_upstream_{0};
  std::atomic<uint64_t> draining_{0};
  std::atomic<uint64_t> too_many_calls_{0};
  std::atomic<uint64_t> buffer_full_{0};
  std::atomic<uint64_t> dropped_buffer_full_{0};
  std::atomic<uint64_t> dropped_send_timeout_{0};
  std::atomic<const ResponseMemory*> memory_{nullptr};
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_READ_REJECTIONS_H_
