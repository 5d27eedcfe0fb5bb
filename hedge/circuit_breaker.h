// CircuitBreaker: per-replica health with generation tickets.
//
// Closed: every attempt is allowed; `failure_threshold` consecutive failures
// open the circuit. Open: nothing is allowed until `cooldown` has passed;
// then exactly one half-open probe is granted. The probe's success closes
// the circuit, its failure reopens it (for another cooldown), and its
// cancellation releases the probe with no verdict, so a later attempt may
// probe again.
//
// Every transition bumps the generation. An attempt carries the ticket it
// was granted; an outcome whose ticket generation is not current is ignored,
// so a slow success that started before the circuit opened cannot close it,
// and a stale failure cannot reopen a circuit that has since closed.
//
// Cancellation is neutral: it never counts as success or failure.
//
// Thread safety: safe from any thread (internal mutex). The transition
// listener is called after the mutex is released, on the calling thread, so
// it may call back into the breaker; transitions made concurrently on other
// threads may reach it out of order (the generation orders them).

#ifndef TAILGATE_HEDGE_CIRCUIT_BREAKER_H_
#define TAILGATE_HEDGE_CIRCUIT_BREAKER_H_

#include <cstdint>
#include <functional>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hedge/sync/mutex.h"

namespace tailgate::hedge {

enum class CircuitState { kClosed, kOpen, kHalfOpen };

const char* CircuitStateName(CircuitState state);  // "closed", "open", ...

struct CircuitConfig {
  int failure_threshold = 5;                   // >= 1
  absl::Duration cooldown = absl::Seconds(1);  // > 0, finite
};

absl::Status ValidateCircuitConfig(const CircuitConfig& config);

// Permission for one attempt. Report its outcome exactly once.
struct CircuitTicket {
  uint64_t generation = 0;
  bool probe = false;
};

struct CircuitSnapshot {
  CircuitState state = CircuitState::kClosed;
  uint64_t generation = 0;
  int consecutive_failures = 0;
};

class CircuitBreaker {
 public:
  // Called with (from, to, new generation) on every transition.
  using TransitionListener = std::function<void(
      CircuitState from, CircuitState to, uint64_t generation)>;

  // REQUIRES: ValidateCircuitConfig(config).ok()
  explicit CircuitBreaker(const CircuitConfig& config,
                          TransitionListener listener = nullptr);

  CircuitBreaker(const CircuitBreaker&) = delete;
  CircuitBreaker& operator=(const CircuitBreaker&) = delete;

  // True when TryAcquire(now) would grant a ticket: closed, or open with the
  // cooldown elapsed, or half-open with no probe out.
  bool IsEligible(absl::Time now) const;

  // Grants a ticket: a plain one when closed; the single probe when open past
  // its cooldown (moving to half-open) or half-open with no probe out;
  // nothing otherwise.
  std::optional<CircuitTicket> TryAcquire(absl::Time now);

  // Outcome reports. Stale tickets (generation not current) are ignored.
  void OnSuccess(const CircuitTicket& ticket, absl::Time now);
  void OnFailure(const CircuitTicket& ticket, absl::Time now);
  // Neutral: releases the probe if `ticket` is the current probe.
  void OnCancel(const CircuitTicket& ticket);

  CircuitSnapshot Snapshot() const;

 private:
  struct Transition {
    CircuitState from;
    CircuitState to;
    uint64_t generation;
  };
  void Notify(const std::optional<Transition>& transition) const
      ABSL_LOCKS_EXCLUDED(mu_);
  Transition MoveTo(CircuitState to, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool IsEligibleLocked(absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const CircuitConfig config_;
  const TransitionListener listener_;

  // State below is protected by mu_ (a hedge::Mutex rather than an
  // absl::Mutex: see hedge/sync/mutex.h).
  mutable Mutex mu_;
  CircuitState state_ ABSL_GUARDED_BY(mu_) = CircuitState::kClosed;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  int consecutive_failures_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time opened_at_ ABSL_GUARDED_BY(mu_);
  bool probe_out_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_CIRCUIT_BREAKER_H_
