// GiveUpPoint: how long an upstream's primary attempt may run before the
// read stops waiting for it, learned from the upstream's answers.
//
//   give-up point = clamp(factor * p99 of recent answers, min, max)
//
// "Recent answers" are the complete good answers (status < 500, not 429)
// of every attempt of the upstream (primaries, hedges and fallbacks alike)
// over the last kWindow, each timed from its own start. Until the window holds
// kMinSamples answers the point is the caller's prior, clamped to
// [min, max]: the engine passes kPriorHedgeDelays times the upstream's
// hedge delay, the operator's own statement of how long an answer may
// normally take, so that a replica that hangs from the first read costs
// that long and not `max` before anything is learned.
//
// Why no ratchet: only answers are samples. A primary cut because the
// fallback launched at the give-up point won is not one (neither complete
// nor censored), so a sick replica's hung attempts cannot drag the point
// up to where it no longer protects anyone; the answers of those
// fallbacks (on other replicas), and of a given-up primary that answers
// first, are samples: when every replica slows down together, those
// answers are slow, and the point rises with them within a window. What a
// give-up may cost meanwhile is bounded by the retry budget, which pays
// for every give-up fallback.
//
// The point is recomputed at most once per kRefresh (reading a quantile
// walks the sketch), so a read pays for a lock and a comparison.
//
// Thread safety: safe from any thread (one internal mutex).

#ifndef TAILGATE_HEDGE_HEALTH_GIVE_UP_POINT_H_
#define TAILGATE_HEDGE_HEALTH_GIVE_UP_POINT_H_

#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hedge/adaptive/censored_latency_sketch.h"
#include "hedge/sync/mutex.h"

namespace tailgate::hedge {

struct GiveUpConfig {
  // 0 turns giving up off; else in [1, 100].
  double factor = 3;
  absl::Duration min = absl::Milliseconds(20);   // > 0
  absl::Duration max = absl::Milliseconds(500);  // >= min, <= 1h
};

// Names the bad field: give_up_factor, give_up_min, give_up_max.
absl::Status ValidateGiveUpConfig(const GiveUpConfig& config);

class GiveUpPoint {
 public:
  static constexpr double kQuantile = 0.99;
  static constexpr int kMinSamples = 10;
  static constexpr absl::Duration kWindow = absl::Seconds(10);
  static constexpr absl::Duration kRefresh = absl::Milliseconds(100);
  static constexpr int kPriorHedgeDelays = 4;

  // REQUIRES: ValidateGiveUpConfig(config).ok()
  explicit GiveUpPoint(const GiveUpConfig& config);
  GiveUpPoint(const GiveUpPoint&) = delete;
  GiveUpPoint& operator=(const GiveUpPoint&) = delete;

  // A complete answer with status < 500 that took `latency`.
  void ObserveAnswer(absl::Time now, absl::Duration latency);

  // The point in force at `now` (`prior` until it is learned), capped at
  // `cap` (the read's timeout share); nullopt when giving up is off.
  std::optional<absl::Duration> PointFor(absl::Time now, absl::Duration prior,
                                         absl::Duration cap) const;

  // Whether the point is learned (kMinSamples in the window) or the prior.
  bool learned() const;
  const GiveUpConfig& config() const { return config_; }

 private:
  // The learned point, or nullopt before kMinSamples answers.
  std::optional<absl::Duration> Recompute(absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const GiveUpConfig config_;
  mutable Mutex mu_;
  // Mutable: reading the point moves its window to `now`.
  mutable CensoredLatencySketch sketch_ ABSL_GUARDED_BY(mu_);
  mutable std::optional<absl::Duration> point_ ABSL_GUARDED_BY(mu_);
  mutable absl::Time computed_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  mutable bool learned_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_HEALTH_GIVE_UP_POINT_H_
