// HedgePayoff: whether an upstream's timer hedges are paying, and how much
// of the speculative spend they may still have.
//
// Every read whose timer hedge was launched ends as a win (the hedge gave
// the answer) or a loss (the primary answered first, or the deadline came
// with neither); a caller's cancel, both attempts failing, or a primary
// that answered before the hedge had run half the hedge delay tells
// nothing (read_decision.h); so does a hedge a batch paid with its own
// credit, which the gate does not hold back either. The win ratio is an
// exponentially weighted average over the last ~kMemory such outcomes (it
// starts at 1: hedges pay until shown otherwise). From it, the spend level:
//   win ratio >= kFullAt  -> 1 (every wanted hedge goes on to the budget)
//   win ratio <= kFloorAt -> kFloor (1 wanted hedge in 10: still probing,
//                            so that wins coming back are noticed)
//   in between            -> linear.
// When every replica is slow together, the hedge is as slow as the primary
// it races and loses to its head start: the ratio falls and the spend with
// it. AllowHedge passes wanted hedges at the spend level, deterministically
// (a running allowance, no randomness). It only ever refuses: the hedge
// budget is consulted after it, so `extra <= burst + fraction * admitted`
// holds whatever it says.
//
// Thread safety: safe from any thread (one lock).

#ifndef TAILGATE_HEDGE_ADAPTIVE_HEDGE_PAYOFF_H_
#define TAILGATE_HEDGE_ADAPTIVE_HEDGE_PAYOFF_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "hedge/sync/mutex.h"

namespace tailgate::hedge {

class HedgePayoff {
 public:
  static constexpr double kFloor = 0.1;
  static constexpr double kFloorAt = 0.05;
  static constexpr double kFullAt = 0.25;
  static constexpr int kMemory = 16;

  HedgePayoff() = default;
  HedgePayoff(const HedgePayoff&) = delete;
  HedgePayoff& operator=(const HedgePayoff&) = delete;

  // A read wants a timer hedge: may it go on to ask the budget? A refusal
  // is counted in held_back().
  bool AllowHedge();

  // A read whose timer hedge was launched ended; `won`: the hedge answered.
  void OnHedgeResult(bool won);

  double win_ratio() const;
  double spend() const;  // in [kFloor, 1]
  uint64_t held_back() const;

 private:
  static double SpendFor(double win_ratio);

  mutable Mutex mu_;
  double win_ratio_ ABSL_GUARDED_BY(mu_) = 1.0;
  double allowance_ ABSL_GUARDED_BY(mu_) = 1.0;  // in [0, 1]
  uint64_t held_back_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_ADAPTIVE_HEDGE_PAYOFF_H_
