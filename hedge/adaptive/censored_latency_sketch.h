// CensoredLatencySketch: a constant-memory, sliding-window latency
// histogram with log-spaced buckets that keeps censored samples apart from
// complete ones, and reads quantiles off the Kaplan-Meier survival curve.
//
// A complete sample says "this attempt took t". A censored sample says
// "this attempt took more than t": it was cut short (its read was won by
// the hedge, cancelled, or ran out of time) or failed before answering.
// Dropping censored samples, or recording them as complete, both shorten
// the tail the estimator sees; a hedge delay chosen from such a tail hedges
// earlier, which censors more primaries, which shortens the tail again: the
// ratchet. The Kaplan-Meier estimate keeps a censored sample "at risk" up
// to its bucket and no further, so what hedging cuts short is counted as
// slower than where it was cut, and nothing else is assumed about it.
//
// Buckets: bucket 0 holds [0, kMin); bucket i >= 1 holds
// [kMin * kGamma^(i-1), kMin * kGamma^i); the last bucket also takes
// everything above kMax. A quantile is reported as its bucket's geometric
// midpoint, so between kMin and kMax its relative error is at most
// sqrt(kGamma) - 1 (under 2 %), on top of the estimate's sampling error.
//
// Window: `slots` time slots of window/slots each; a sample goes to the
// slot of its `now`, and a slot is cleared when time reaches it again. The
// sketch covers the last `window` at most, and at least window - slot.
// Memory: 2 * kBuckets * slots counters, whatever the traffic.
//
// Thread safety: not thread-safe (one owner, or a lock around it).

#ifndef TAILGATE_HEDGE_ADAPTIVE_CENSORED_LATENCY_SKETCH_H_
#define TAILGATE_HEDGE_ADAPTIVE_CENSORED_LATENCY_SKETCH_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/time/time.h"

namespace tailgate::hedge {

class CensoredLatencySketch {
 public:
  static constexpr double kGamma = 1.04;
  static constexpr absl::Duration kMin = absl::Microseconds(20);
  static constexpr absl::Duration kMax = absl::Seconds(30);
  // 1 + ceil(ln(kMax / kMin) / ln(kGamma)).
  static constexpr int kBuckets = 364;

  struct Options {
    absl::Duration window = absl::Seconds(4);
    int slots = 4;  // at least 1
  };

  // REQUIRES: options.window > 0, options.slots >= 1.
  explicit CensoredLatencySketch(const Options& options);

  void AddComplete(absl::Time now, absl::Duration latency);
  void AddCensored(absl::Time now, absl::Duration at_least);
  // Moves the window forward to `now` without a sample, clearing the slots
  // passed, so that what has left the window stops counting even when no
  // sample comes.
  void Advance(absl::Time now);

  // Samples in the window, complete and censored (as of the last Add or
  // Advance).
  uint64_t complete() const { return complete_total_; }
  uint64_t censored() const { return censored_total_; }

  // The p-quantile (0 < p <= 1) of the latency under Kaplan-Meier.
  struct Quantile {
    absl::Duration value;
    // The survival curve never fell to 1 - p: the censored samples leave the
    // quantile somewhere above `value`, the top of the highest bucket that
    // holds a sample. nullopt from Quantile() only when the window is empty.
    bool lower_bound = false;
  };
  std::optional<Quantile> QuantileOf(double p) const;

  // Median of the remaining latency of an attempt that has already run
  // `elapsed`: the t at which the survival curve falls to half its value at
  // `elapsed`, minus `elapsed`. lower_bound as for QuantileOf; nullopt when
  // the window holds nothing slower than `elapsed`.
  std::optional<Quantile> MedianRemaining(absl::Duration elapsed) const;

  // Bucket of `latency`, and the geometric midpoint / upper edge of a bucket.
  static int BucketOf(absl::Duration latency);
  static absl::Duration Midpoint(int bucket);
  static absl::Duration UpperEdge(int bucket);

 private:
  struct Slot {
    std::array<uint32_t, kBuckets> complete{};
    std::array<uint32_t, kBuckets> censored{};
    uint64_t complete_total = 0;
    uint64_t censored_total = 0;
  };
  // Sums over the window, bucket by bucket.
  struct Totals {
    std::array<uint64_t, kBuckets> complete{};
    std::array<uint64_t, kBuckets> censored{};
  };

  Totals Sum() const;

  const absl::Duration slot_length_;
  std::vector<Slot> slots_;
  size_t current_ = 0;
  std::optional<absl::Time> current_start_;  // none until the first sample
  uint64_t complete_total_ = 0;
  uint64_t censored_total_ = 0;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_ADAPTIVE_CENSORED_LATENCY_SKETCH_H_
