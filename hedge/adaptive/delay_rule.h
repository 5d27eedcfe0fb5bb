// DelayRule: how a hedge delay is read off the primaries' latency sketch.
//
// The budget lets hedges go to about `fraction` of reads; the delay should
// send them to the reads that need them, and to no others. Three rules:
//
//   kTailQuantile   Q(1 - fraction). Hedges exactly the slowest `fraction`
//                   of primaries; but when the fast mode holds more than
//                   1 - fraction of reads, Q(1 - fraction) lies inside it,
//                   a hair above most fast reads, and a read that is merely
//                   a little slower than the median is hedged for nothing.
//   kScaledTail     margin * Q(1 - fraction). Clears a tight fast mode, but
//                   also scales a delay that already sits in the slow tail,
//                   hedging fewer than `fraction` stragglers, and late.
//   kTailOrBody     max(Q(1 - kBudgetHeadroom * fraction),
//                       margin * Q(0.5)), the default (margin kDelayMargin).
//                   Never more than 90 % of what the budget earns (the
//                   first term: hedging right up to the budget's fraction
//                   leaves no credit for a burst of stragglers, and the
//                   budget then skips the very hedges that matter), and
//                   never inside the body of the distribution (the
//                   second): a read is hedged only once it has taken
//                   1.25 times the median. The median is the most stable
//                   quantile there is, and a tight fast mode (a replica's
//                   answer plus the sidecar's own path, +-10 %) ends before
//                   1.25 times its median; a wider margin (1.5) cleared
//                   it too, but each tenth of the margin is a tenth of a
//                   fast read added to every hedged read's latency.
// docs/ADAPTIVE_HEDGING.md has the measurements behind the choice.
//
// Thread safety: pure functions.

#ifndef TAILGATE_HEDGE_ADAPTIVE_DELAY_RULE_H_
#define TAILGATE_HEDGE_ADAPTIVE_DELAY_RULE_H_

#include <optional>

#include "absl/time/time.h"
#include "hedge/adaptive/censored_latency_sketch.h"

namespace tailgate::hedge {

enum class DelayRule { kTailQuantile, kScaledTail, kTailOrBody };
const char* DelayRuleName(DelayRule rule);  // "tail_quantile", ...

inline constexpr double kDelayMargin = 1.25;
inline constexpr double kBudgetHeadroom = 0.9;

// The delay `rule` reads off `sketch` for a hedge fraction in [0, 1]
// (unclamped); nullopt when the sketch is empty. A quantile the censored
// samples leave unknown counts as its lower bound. `margin` (> 1) scales
// kScaledTail's quantile and kTailOrBody's median; the engine always uses
// kDelayMargin, the benchmark compares others.
std::optional<absl::Duration> ChooseHedgeDelay(
    const CensoredLatencySketch& sketch, double fraction, DelayRule rule,
    double margin = kDelayMargin);

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_ADAPTIVE_DELAY_RULE_H_
