// HedgeDelayPolicy: how long a read waits for its primary before hedging.
//
// The engine asks once per read, at admission. Its one implementation is
// hedge/adaptive/adaptive_hedge_delay.h: a fixed delay (the seed's policy),
// or with `auto` one learned from ObservePrimary, every primary attempt's
// end, answered or cut short.
//
// Thread safety: implementations must be safe from any thread.

#ifndef TAILGATE_HEDGE_POLICY_HEDGE_DELAY_H_
#define TAILGATE_HEDGE_POLICY_HEDGE_DELAY_H_

#include <optional>

#include "absl/time/time.h"

namespace tailgate::hedge {

class HedgeDelayPolicy {
 public:
  virtual ~HedgeDelayPolicy() = default;

  // The delay for one read. `requested` is the caller's per-read choice
  // (positive) when it made one.
  virtual absl::Duration DelayFor(
      std::optional<absl::Duration> requested) const = 0;

  // How a primary attempt ended.
  enum class PrimaryEnd {
    kAnswered,  // complete, status < 500, not 429: its latency is `elapsed`
    // Cut short (its read was won by the hedge, cancelled or out of time)
    // or failed: an answer would have taken more than `elapsed`.
    kCensored,
  };

  // How long a read whose hedge timer found the hedge budget low waits,
  // from its start, before asking for a hedge again (see
  // ReadOptions::late_hedge_delay); zero: it does not. Default: zero.
  virtual absl::Duration LateDelayFor(
      std::optional<absl::Duration> /*requested*/) const {
    return absl::ZeroDuration();
  }

  // A primary attempt ended at `now`, `elapsed` after it started. Default:
  // ignored.
  virtual void ObservePrimary(absl::Time /*now*/, absl::Duration /*elapsed*/,
                              PrimaryEnd /*end*/) {}

  // The median time a primary that has run `elapsed` still needs to
  // answer, from what the policy has observed; nullopt when it keeps no
  // such record or has too little.
  virtual std::optional<absl::Duration> MedianRemaining(
      absl::Duration /*elapsed*/) const {
    return std::nullopt;
  }
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_POLICY_HEDGE_DELAY_H_
