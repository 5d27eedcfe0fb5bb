// Rejections: reads the server refused before they reached the engine,
// counted by reason for GetStats and tailgate_rejected_total{reason}. The
// engine counts its own refusals for max_requests
// (EngineSnapshot::rejected_overloaded, reason "overloaded").
//
// Thread safety: safe from any thread (relaxed atomics).

#ifndef TAILGATE_SERVER_REJECTIONS_H_
#define TAILGATE_SERVER_REJECTIONS_H_

#include <atomic>
#include <cstdint>

namespace tailgate::server {

enum class RejectReason {
  kInvalidArgument,  // malformed descriptor
  kUnknownUpstream,  // `upstream` names no replica set
  kDraining,         // the server is shutting down
};

struct RejectionSnapshot {
  uint64_t invalid_argument = 0;
  uint64_t unknown_upstream = 0;
  uint64_t draining = 0;
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
    return snapshot;
  }

 private:
  std::atomic<uint64_t>& Counter(RejectReason reason) {
    switch (reason) {
      case RejectReason::kInvalidArgument:
        return invalid_argument_;
      case RejectReason::kUnknownUpstream:
        return unknown_upstream_;
      case RejectReason::kDraining:
        break;
    }
    return draining_;
  }

  std::atomic<uint64_t> invalid_argument_{0};
  std::atomic<uint64_t> unknown_upstream_{0};
  std::atomic<uint64_t> draining_{0};
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_REJECTIONS_H_
