// ReplicaLoad: what choosing a replica costs now — its recent latency and
// the attempts it has in flight — for load-aware replica choice
// (ReplicaPicker, power of two choices).
//
//   cost = max(latency estimate, mean age of its attempts in flight,
//              kLatencyFloor) * (attempts in flight + 1)
//
// The latency estimate is an exponentially weighted moving average in
// time (time constant kDecay): a sample observed dt after the previous one
// weighs 1 - exp(-dt / kDecay), so a busy replica's estimate follows its
// last second or so of answers however many there are, and one straggler
// among many answers moves it little. Samples are answers (their latency)
// and attempts cut short (how long they had run: a lower bound, counted as
// if it were the latency, so a replica whose attempts hang and lose their
// race or are given up becomes expensive at once). Without new samples the
// estimate decays toward zero with time constant kIdleDecay, so a replica
// that was avoided for being slow is tried again within a second or two
// (ln(its estimate / the others') * kIdleDecay); after more than kDecay
// without a sample, the next one blends with that decayed view rather
// than the stale estimate, so what the replica answers then sets its
// estimate afresh: a healed replica is found at once, and a sick one keeps
// collecting the failures that eject it. The mean age of the attempts
// in flight makes a replica that has stopped answering expensive before
// any of them ends. The floor (kLatencyFloor) makes replicas that answer
// within a millisecond equal: below it, differences are noise of the
// host, not of the replica, and would steer every read to whichever
// replica was lucky last. Before its first sample a replica's estimate is zero:
// equal to every other unknown one, and cheaper than any known one, which
// is what a replica that just joined should be.
//
// Thread safety: safe from any thread (one internal mutex).

#ifndef TAILGATE_HEDGE_HEALTH_REPLICA_LOAD_H_
#define TAILGATE_HEDGE_HEALTH_REPLICA_LOAD_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "hedge/sync/mutex.h"

namespace tailgate::hedge {

struct ReplicaLoadSnapshot {
  absl::Duration latency;  // the estimate, decayed to now
  int64_t in_flight = 0;
  double cost_seconds = 0;  // Cost(now), in seconds
};

class ReplicaLoad {
 public:
  static constexpr absl::Duration kDecay = absl::Seconds(1);
  static constexpr absl::Duration kIdleDecay = absl::Milliseconds(250);
  static constexpr absl::Duration kLatencyFloor = absl::Milliseconds(1);
  static constexpr absl::Duration kFailurePenalty = absl::Milliseconds(10);

  ReplicaLoad() = default;
  ReplicaLoad(const ReplicaLoad&) = delete;
  ReplicaLoad& operator=(const ReplicaLoad&) = delete;

  // An attempt started at `started`. Every Begin is matched by one End
  // with the same `started`.
  void Begin(absl::Time started);

  enum class Ending {
    kAnswered,  // a complete answer: its latency is a sample
    kCutShort,  // cancelled after running (lost its race, given up, timed
                // out): how long it ran, a lower bound, is a sample
    kFailed,    // failed (5xx, 429, transport): raises the estimate to how long
                // it ran, and to at least kFailurePenalty; never lowers it
                // (a refusal is quick, not cheap: a replica that fails
                // fast must not draw the reads of least-cost choice)
    kNoSample,  // ended for reasons of the caller's: no sample
  };
  void End(absl::Time started, absl::Time now, Ending ending);
  // Forgets the estimate and starts again from `latency`: a probe's
  // answer, for a replica whose estimate is from before its ejection.
  void RestartFrom(absl::Time now, absl::Duration latency);

  // The cost above, in seconds.
  double Cost(absl::Time now) const;
  ReplicaLoadSnapshot Snapshot(absl::Time now) const;

 private:
  void AddSample(absl::Time now, absl::Duration sample)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RaiseTo(absl::Time now, absl::Duration floor)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Duration DecayedLocked(absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  double CostLocked(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Duration MeanAgeLocked(absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  double estimate_seconds_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_sample_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  // Sum of the start times of the attempts in flight, in nanoseconds since
  // the epoch, for their mean age.
  __int128 started_sum_nanos_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_HEALTH_REPLICA_LOAD_H_
