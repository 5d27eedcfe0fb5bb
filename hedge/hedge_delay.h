// HedgeDelayPolicy: how long a read waits for its primary before hedging.
//
// The engine asks once per read, at admission. FixedHedgeDelay is the seed's
// policy; an adaptive one (e.g. a latency quantile) plugs in through the same
// interface and learns from ObserveLatency.
//
// Thread safety: implementations must be safe from any thread.

#ifndef TAILGATE_HEDGE_HEDGE_DELAY_H_
#define TAILGATE_HEDGE_HEDGE_DELAY_H_

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

  // The latency of a complete, successful attempt. Default: ignored.
  virtual void ObserveLatency(absl::Duration /*latency*/) {}
};

// Always `delay`, unless the caller requested another.
class FixedHedgeDelay final : public HedgeDelayPolicy {
 public:
  // REQUIRES: delay > absl::ZeroDuration()
  explicit FixedHedgeDelay(absl::Duration delay) : delay_(delay) {}

  absl::Duration DelayFor(
      std::optional<absl::Duration> requested) const override {
    return requested.has_value() ? *requested : delay_;
  }

 private:
  const absl::Duration delay_;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_HEDGE_DELAY_H_
