#include "hedge/adaptive/delay_rule.h"

#include <algorithm>

namespace tailgate::hedge {

const char* DelayRuleName(DelayRule rule) {
  switch (rule) {
    case DelayRule::kTailQuantile:
      return "tail_quantile";
    case DelayRule::kScaledTail:
      return "scaled_tail";
    case DelayRule::kTailOrBody:
      return "tail_or_body";
  }
  return "unknown";
}

std::optional<absl::Duration> ChooseHedgeDelay(
    const CensoredLatencySketch& sketch, double fraction, DelayRule rule,
    double margin) {
  const double p = 1.0 - std::clamp(fraction, 0.0, 1.0);
  const std::optional<CensoredLatencySketch::Quantile> tail =
      sketch.QuantileOf(std::max(p, 1e-9));
  if (!tail.has_value()) return std::nullopt;
  switch (rule) {
    case DelayRule::kTailQuantile:
      return tail->value;
    case DelayRule::kScaledTail:
      return tail->value * margin;
    case DelayRule::kTailOrBody: {
      const double within_budget =
          1.0 - kBudgetHeadroom * std::clamp(fraction, 0.0, 1.0);
      const absl::Duration tail_in_budget =
          sketch.QuantileOf(std::max(within_budget, 1e-9))->value;
      const absl::Duration median = sketch.QuantileOf(0.5)->value;
      return std::max(tail_in_budget, median * margin);
    }
  }
  return tail->value;
}

}  // namespace tailgate::hedge
