// AdmissionLimits: global, non-blocking bounds on concurrent reads and on
// concurrent upstream attempts.
//
// An attempt that runs beside its read's primary (a timer hedge, a
// give-up fallback) also takes an overlap slot, of which there are
// max_attempts - max_requests: the primaries (and failure fallbacks, which
// replace theirs), at most one per admitted read, then always find an
// attempt permit, however many hedges a batch's credit could pay for.
// With max_attempts <= max_requests no such room can be kept, and
// overlapping attempts are bounded by the attempt permits alone.
//
// A full limit refuses at once; nothing ever queues. A Permit releases its
// slot exactly once: when destroyed, or on Release(). Permits are movable.
//
// Thread safety: safe from any thread (lock-free). Permits may be released
// on a different thread than the one that acquired them.

#ifndef TAILGATE_HEDGE_POLICY_ADMISSION_LIMITS_H_
#define TAILGATE_HEDGE_POLICY_ADMISSION_LIMITS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>

#include "absl/status/status.h"

namespace tailgate::hedge {

// One non-blocking counting semaphore.
class Semaphore;

// A held slot of a Semaphore. Default-constructed: holds nothing. The
// Semaphore must outlive its permits.
class Permit {
 public:
  Permit() = default;
  Permit(Permit&& other) noexcept;
  Permit& operator=(Permit&& other) noexcept;
  Permit(const Permit&) = delete;
  Permit& operator=(const Permit&) = delete;
  ~Permit() { Release(); }

  // Releases the slot if one is held; later calls do nothing.
  void Release();
  bool held() const { return owner_ != nullptr; }

 private:
  friend class Semaphore;
  explicit Permit(Semaphore* owner) : owner_(owner) {}
  Semaphore* owner_ = nullptr;
};

class Semaphore {
 public:
  // REQUIRES: capacity >= 1
  explicit Semaphore(int64_t capacity) : capacity_(capacity) {}
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;

  // A permit, or nullopt at once when all `capacity` slots are held.
  std::optional<Permit> TryAcquire();

  int64_t in_use() const { return in_use_.load(std::memory_order_relaxed); }
  int64_t capacity() const { return capacity_; }

 private:
  friend class Permit;
  void ReleaseOne();

  const int64_t capacity_;
  std::atomic<int64_t> in_use_{0};
};

struct AdmissionConfig {
  int64_t max_requests = 128;  // in [1, 1000000]
  int64_t max_attempts = 160;  // in [1, 1000000]
};

// Checks the ranges above; the message names the bad field.
absl::Status ValidateAdmissionConfig(const AdmissionConfig& config);

class AdmissionLimits {
 public:
  // REQUIRES: ValidateAdmissionConfig(config).ok()
  explicit AdmissionLimits(const AdmissionConfig& config)
      : requests_(config.max_requests),
        attempts_(config.max_attempts),
        overlaps_limited_(config.max_attempts > config.max_requests),
        overlaps_(
            std::max<int64_t>(config.max_attempts - config.max_requests, 1)) {}

  std::optional<Permit> TryAdmitRequest() { return requests_.TryAcquire(); }
  std::optional<Permit> TryStartAttempt() { return attempts_.TryAcquire(); }
  // An overlap slot for an attempt beside its read's primary (taken with
  // its attempt permit), or nullopt when all are held. With no overlap
  // room to keep (see above), a permit that holds nothing.
  std::optional<Permit> TryStartOverlap() {
    if (!overlaps_limited_) return Permit();
    return overlaps_.TryAcquire();
  }

  const Semaphore& requests() const { return requests_; }
  const Semaphore& attempts() const { return attempts_; }
  const Semaphore& overlaps() const { return overlaps_; }

 private:
  Semaphore requests_;
  Semaphore attempts_;
  const bool overlaps_limited_;
  Semaphore overlaps_;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_POLICY_ADMISSION_LIMITS_H_
