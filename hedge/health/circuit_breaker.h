// CircuitBreaker: one replica's health — serving, ejected or probing —
// with generation tickets. (The circuit names of the API map onto these
// states: closed = serving, open = ejected, half-open = probing.)
//
// Serving (closed): user attempts are granted. Every outcome is counted in
// a sliding window (OutcomeWindow) and a run of consecutive failures is
// kept. WantsEjection() becomes true when the run reaches
// `failure_threshold`, or when the window holds at least `min_requests`
// outcomes of which at least `failure_rate` failed. The breaker does not
// eject itself: the set's guard rails (ReplicaPicker) decide, and call
// Eject.
//
// Ejected (open): no attempt is granted. The ejection lasts
// cooldown * 2^(k-1), at most `max_ejection_time`, for the k-th ejection
// in a row; k starts again at 1 once the replica has served for
// `max_ejection_time` since it last came back.
//
// Probing (half-open): still no user attempt. Once the ejection time is
// over, TryAcquireProbe grants one probe at a time (an attempt the caller
// makes on the side, never a user's only attempt). `probe_successes`
// successful probes in a row bring the replica back to serving; a failed
// probe ejects it again, for longer. A cancelled probe releases the probe
// with no verdict.
//
// Back in service, the replica's weight ramps up linearly from
// kMinWeight to 1 over `ramp_up` (ReplicaPicker lets it be chosen with
// that probability), so its share of reads grows rather than jumps.
//
// Every transition bumps the generation. An attempt carries the ticket it
// was granted; an outcome whose ticket generation is not current is
// ignored, so a slow success that started before an ejection cannot count
// after it, and a stale failure cannot count against a replica that has
// since come back.
//
// Cancellation is neutral: it never counts as success or failure.
//
// Thread safety: safe from any thread (internal mutex). The transition
// listener is called after the mutex is released, on the calling thread, so
// it may call back into the breaker; transitions made concurrently on other
// threads may reach it out of order (the generation orders them).

#ifndef TAILGATE_HEDGE_HEALTH_CIRCUIT_BREAKER_H_
#define TAILGATE_HEDGE_HEALTH_CIRCUIT_BREAKER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hedge/health/outcome_window.h"
#include "hedge/sync/mutex.h"

namespace tailgate::hedge {

enum class CircuitState { kClosed, kOpen, kHalfOpen };

const char* CircuitStateName(CircuitState state);  // "closed", "open", ...
// The replica state each circuit state is: "serving", "ejected", "probing".
const char* ReplicaStateName(CircuitState state);

// Why a replica was ejected.
enum class EjectReason {
  kConsecutive,  // failure_threshold failures in a row
  kFailureRate,  // failure_rate of the window's outcomes
  kProbe,        // a probe failed
};
inline constexpr int kEjectReasons = 3;
const char* EjectReasonName(EjectReason reason);  // "consecutive", ...

struct CircuitConfig {
  int failure_threshold = 5;                   // >= 1
  absl::Duration cooldown = absl::Seconds(1);  // first ejection; > 0, finite
  double failure_rate = 0.3;                   // in (0, 1]
  int min_requests = 5;                        // in [1, 1000000]
  absl::Duration window = absl::Seconds(10);   // in [100ms, 1h]
  absl::Duration max_ejection_time = absl::Seconds(10);  // >= cooldown, <= 1h
  int probe_successes = 2;                               // in [1, 100]
  absl::Duration ramp_up = absl::Seconds(5);             // in [0, 1h]
  // The share of a set's replicas that may be ejected at once (one always
  // may, in a set of two or more; never the last): in [0, 1].
  double max_ejected_share = 0.5;
};

// Names the bad field: failure_threshold, cooldown, ejection_failure_rate,
// ejection_min_requests, ejection_window, max_ejection_time,
// probe_successes, ramp_up, max_ejected_share.
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
  int64_t window_outcomes = 0;
  int64_t window_failures = 0;
  std::array<uint64_t, kEjectReasons> ejections{};  // by EjectReason
  uint64_t probes = 0;                              // probes granted
  uint64_t probe_failures = 0;
  double weight = 1;           // the ramp-up weight now (0 unless serving)
  absl::Duration ejected_for;  // the ejection in force or last ended
};

// One transition, as the listener hears it.
struct CircuitTransition {
  CircuitState from;
  CircuitState to;
  uint64_t generation;
  EjectReason reason = EjectReason::kConsecutive;  // when `to` is kOpen
  absl::Duration ejected_for;                      // when `to` is kOpen
};

class CircuitBreaker {
 public:
  static constexpr double kMinWeight = 0.1;

  using TransitionListener = std::function<void(const CircuitTransition&)>;

  // REQUIRES: ValidateCircuitConfig(config).ok()
  explicit CircuitBreaker(const CircuitConfig& config,
                          TransitionListener listener = nullptr);

  CircuitBreaker(const CircuitBreaker&) = delete;
  CircuitBreaker& operator=(const CircuitBreaker&) = delete;

  // True when TryAcquire would grant a ticket: serving.
  bool IsEligible(absl::Time now) const;
  // A plain ticket while serving; nothing otherwise.
  std::optional<CircuitTicket> TryAcquire(absl::Time now);

  // True when TryAcquireProbe would grant a probe.
  bool WantsProbe(absl::Time now) const;
  // The one probe: ejected past its time (moving to probing), or probing
  // with no probe out; nothing otherwise.
  std::optional<CircuitTicket> TryAcquireProbe(absl::Time now);
  // When the ejection in force ends (InfiniteFuture unless ejected).
  absl::Time ejected_until() const;

  // Outcome reports. Stale tickets (generation not current) are ignored.
  void OnSuccess(const CircuitTicket& ticket, absl::Time now);
  void OnFailure(const CircuitTicket& ticket, absl::Time now);
  // Neutral: releases the probe if `ticket` is the current probe.
  void OnCancel(const CircuitTicket& ticket);

  // Serving, with a failure run or rate past its threshold (above). The
  // reason it would be ejected for, or nullopt.
  std::optional<EjectReason> WantsEjection(absl::Time now) const;
  // Ejects a serving replica (no-op otherwise).
  void Eject(absl::Time now, EjectReason reason);

  // The window's failure share now (0 when empty).
  double FailureRate(absl::Time now) const;
  // The ramp-up weight: 1 when serving at full share, kMinWeight..1 while
  // ramping up, 0 when not serving.
  double Weight(absl::Time now) const;

  CircuitSnapshot Snapshot(absl::Time now) const;
  const CircuitConfig& config() const { return config_; }

 private:
  void Notify(const std::optional<CircuitTransition>& transition) const
      ABSL_LOCKS_EXCLUDED(mu_);
  CircuitTransition MoveTo(CircuitState to, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  CircuitTransition EjectLocked(absl::Time now, EjectReason reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool WantsProbeLocked(absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<EjectReason> WantsEjectionLocked(absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  double WeightLocked(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const CircuitConfig config_;
  const TransitionListener listener_;

  // State below is protected by mu_ (a hedge::Mutex rather than an
  // absl::Mutex: see hedge/sync/mutex.h).
  mutable Mutex mu_;
  CircuitState state_ ABSL_GUARDED_BY(mu_) = CircuitState::kClosed;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  int consecutive_failures_ ABSL_GUARDED_BY(mu_) = 0;
  OutcomeWindow window_ ABSL_GUARDED_BY(mu_);
  // Ejections in a row (the multiplier of the ejection time).
  int ejections_in_row_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time ejected_until_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  absl::Duration ejected_for_ ABSL_GUARDED_BY(mu_);
  // When it last came back to serving; InfinitePast if never ejected.
  absl::Time returned_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool probe_out_ ABSL_GUARDED_BY(mu_) = false;
  int probe_passes_ ABSL_GUARDED_BY(mu_) = 0;
  std::array<uint64_t, kEjectReasons> ejections_ ABSL_GUARDED_BY(mu_){};
  uint64_t probes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t probe_failures_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_HEALTH_CIRCUIT_BREAKER_H_
