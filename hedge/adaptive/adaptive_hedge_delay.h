// AdaptiveHedgeDelay: a hedge delay that follows the upstream's own
// primary latencies (`--hedge_delay=auto`).
//
// Every primary attempt's end goes into a CensoredLatencySketch (4 s
// sliding window in 4 slots of 1 s): an answer as a complete sample, a
// primary cut short (hedge won, cancelled, deadline) or failed as a
// censored one. The delay is DelayRule::kTailOrBody on that sketch,
//   max(Q(1 - 0.9 * hedge_fraction), 1.25 * median),
// clamped to [min, max]. Until the window holds kMinSamples samples the
// delay is kWarmupDelay clamped the same way. It is recomputed at most
// every kRecomputeEvery, on the thread that observes; DelayFor reads the
// last value without a lock.
//
// How fast it follows a shift: a quantile at or below the median moves
// once the new regime fills half the window (2 s), Q(1 - 0.9 f) once it
// fills 1 - 0.9 f of it; every old sample has left the window after 4 s. So the
// delay reaches its new value within 4 s + kRecomputeEvery of the shift
// (adaptive_hedge_delay_test.cc checks both directions).
//
// Why it cannot ratchet: hedging at d cuts short the primaries slower than
// about d + (the hedge's latency), and those are recorded as "slower than
// where they were cut", which Kaplan-Meier counts as survival past that
// point, so every quantile below the cut points is unbiased whatever the
// delay; a quantile above them is reported as its lower bound, which only
// pushes the delay up, towards hedging less.
//
// The learned delay sits just past the fast reads, where a slow spell of
// the host (every read a little late at once) pushes many fast reads over
// it; their hedges lose, and spend the credits the next stragglers need.
// So a learned delay asks for late hedges (LateDelayFor): a read whose
// hedge timer finds the hedge budget below half its burst waits until
// kLateFactor times the delay before asking again (read_decision.h), and
// the last credits go to reads that are late by far. A per-read delay, or
// a fixed one, asks for none: the caller or the operator chose it.
//
// With `enabled` false the delay is the fixed one, and the sketch is still
// kept: MedianRemaining serves the hedge accounting either way.
//
// Thread safety: safe from any thread. ObservePrimary and MedianRemaining
// take a lock; DelayFor is lock-free.

#ifndef TAILGATE_HEDGE_ADAPTIVE_ADAPTIVE_HEDGE_DELAY_H_
#define TAILGATE_HEDGE_ADAPTIVE_ADAPTIVE_HEDGE_DELAY_H_

#include <atomic>
#include <cstdint>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hedge/adaptive/censored_latency_sketch.h"
#include "hedge/adaptive/delay_rule.h"
#include "hedge/policy/hedge_delay.h"
#include "hedge/sync/mutex.h"

namespace tailgate::hedge {

struct AdaptiveDelayConfig {
  bool enabled = false;  // `--hedge_delay=auto`
  absl::Duration min = absl::Milliseconds(1);    // --hedge_delay_min
  absl::Duration max = absl::Milliseconds(200);  // --hedge_delay_max
};

// min > 0 and min <= max, as FieldErrors naming hedge_delay_min or
// hedge_delay_max (the caller checks max against the timeout).
absl::Status ValidateAdaptiveDelayConfig(const AdaptiveDelayConfig& config);

class AdaptiveHedgeDelay final : public HedgeDelayPolicy {
 public:
  static constexpr uint64_t kMinSamples = 50;
  static constexpr absl::Duration kWarmupDelay = absl::Milliseconds(25);
  static constexpr absl::Duration kRecomputeEvery = absl::Milliseconds(10);
  static constexpr absl::Duration kWindow = absl::Seconds(4);
  static constexpr int kSlots = 4;
  static constexpr int kLateFactor = 2;

  // `fixed`: the delay when !config.enabled. `fraction`: the upstream's
  // hedge_fraction.
  // REQUIRES: ValidateAdaptiveDelayConfig(config).ok(), fixed > 0.
  AdaptiveHedgeDelay(const AdaptiveDelayConfig& config, absl::Duration fixed,
                     double fraction);

  absl::Duration DelayFor(
      std::optional<absl::Duration> requested) const override;
  // kLateFactor times the delay in force when the delay is learned and
  // `requested` is empty; zero otherwise.
  absl::Duration LateDelayFor(
      std::optional<absl::Duration> requested) const override;
  void ObservePrimary(absl::Time now, absl::Duration elapsed,
                      PrimaryEnd end) override;
  std::optional<absl::Duration> MedianRemaining(
      absl::Duration elapsed) const override;

 private:
  void Recompute(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const AdaptiveDelayConfig config_;
  const double fraction_;

  std::atomic<int64_t> delay_nanos_;  // the delay in force

  mutable Mutex mu_;
  CensoredLatencySketch sketch_ ABSL_GUARDED_BY(mu_);
  absl::Time next_recompute_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_ADAPTIVE_ADAPTIVE_HEDGE_DELAY_H_
