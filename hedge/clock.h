// Monotonic time for the hedging policy and engine.
//
// Thread safety: Clock implementations are safe to call from any thread.
//
// Policy classes never read the time themselves: their methods take `now`.
// The engine reads it from an injected Clock, so tests drive time by hand
// (see tests/fake_clock.h).

#ifndef TAILGATE_HEDGE_CLOCK_H_
#define TAILGATE_HEDGE_CLOCK_H_

#include "absl/time/time.h"

namespace tailgate::hedge {

// A source of monotonic time. Values are comparable only with other values
// of the same clock; they are not wall-clock time and must not be displayed
// as such.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

// The process-wide monotonic clock (std::chrono::steady_clock).
Clock& SteadyClock();

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_CLOCK_H_
