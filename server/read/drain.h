// DrainGate: admits reads until draining starts, and lets shutdown wait for
// the reads already admitted.
//
// Every Read reactor calls TryEnter when it starts and Exit from OnDone.
// On SIGTERM, main calls StartDrain (new reads are refused with
// UNAVAILABLE, readiness goes false) and then WaitForIdle(--drain_timeout).
//
// Thread safety: safe from any thread. TryEnter and Exit never block beyond
// a short critical section, so gRPC threads may call them.

#ifndef TAILGATE_SERVER_READ_DRAIN_H_
#define TAILGATE_SERVER_READ_DRAIN_H_

#include <atomic>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tailgate::server {

class DrainGate {
 public:
  DrainGate() = default;
  DrainGate(const DrainGate&) = delete;
  DrainGate& operator=(const DrainGate&) = delete;

  // Counts one read in, unless draining has started.
  bool TryEnter();
  // REQUIRES: a matching successful TryEnter.
  void Exit();

  // From now on TryEnter fails. Idempotent.
  void StartDrain();
  bool draining() const { return draining_.load(std::memory_order_acquire); }

  int64_t in_flight() const;

  // Blocks until no read is in flight or `timeout` passes; returns the
  // number still in flight.
  int64_t WaitForIdle(absl::Duration timeout);

 private:
  // Mirrors the draining state under mu_, for lock-free readiness probes.
  std::atomic<bool> draining_{false};

  mutable absl::Mutex mu_;
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_READ_DRAIN_H_
