// IdleTrim: gives the C library's free heap memory back to the kernel once
// the sidecar has gone quiet after serving reads.
//
// Under load every thread that allocates (gRPC's pollers and executors, the
// engine loop, the HTTP door) gets a glibc arena of its own, and the memory
// a burst of reads freed stays in those arenas, resident, until reused:
// several MiB after a saturating run, which a pod's memory limit and its
// working-set metric count as if still in use. Once per `period` the trim
// thread reads `reads` (a count that grows with every admitted read); when
// a whole period passed without a new read, and reads were served since the
// last trim, it calls `trim` (malloc_trim(0) by default: frees the top of
// each arena and madvises away the free pages inside them). A busy sidecar
// is never trimmed; an idle one is trimmed once per quiet spell and then
// costs one wake-up per period.
//
// Example:
//   IdleTrim trim([&engine] { return engine.Snapshot().requests; },
//                 absl::Seconds(1));
//
// Thread safety: the callbacks run on the trim thread (or the caller of
// Tick); Tick and trims() are safe from any thread. The destructor stops
// the thread; the callbacks' captures must outlive the IdleTrim.

#ifndef TAILGATE_SERVER_PROCESS_IDLE_TRIM_H_
#define TAILGATE_SERVER_PROCESS_IDLE_TRIM_H_

#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "hedge/sync/mutex.h"

namespace tailgate::server {

class IdleTrim {
 public:
  // Starts the trim thread unless `period` is zero (tests then call Tick).
  IdleTrim(absl::AnyInvocable<uint64_t()> reads, absl::Duration period,
           absl::AnyInvocable<void()> trim = nullptr);
  ~IdleTrim();
  IdleTrim(const IdleTrim&) = delete;
  IdleTrim& operator=(const IdleTrim&) = delete;

  // One period's look: trims if no read came since the previous Tick and
  // some came since the last trim. Returns whether it trimmed.
  bool Tick();

  uint64_t trims() const { return trims_.load(std::memory_order_relaxed); }

 private:
  void Run();

  absl::AnyInvocable<uint64_t()> reads_;
  absl::AnyInvocable<void()> trim_;
  const absl::Duration period_;

  hedge::Mutex tick_mu_;  // one Tick at a time
  uint64_t last_seen_ ABSL_GUARDED_BY(tick_mu_) = 0;
  uint64_t trimmed_at_ ABSL_GUARDED_BY(tick_mu_) = 0;
  std::atomic<uint64_t> trims_{0};

  hedge::Mutex stop_mu_;
  hedge::CondVar stop_cv_;
  bool stopping_ ABSL_GUARDED_BY(stop_mu_) = false;
  std::thread thread_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_PROCESS_IDLE_TRIM_H_
