#include "hedge/adaptive/adaptive_hedge_delay.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hedge/errors/field_error.h"

namespace tailgate::hedge {

absl::Status ValidateAdaptiveDelayConfig(const AdaptiveDelayConfig& config) {
  if (config.min <= absl::ZeroDuration()) {
    return FieldError("hedge_delay_min",
                      absl::StrCat("must be positive, got ",
                                   absl::FormatDuration(config.min)));
  }
  if (config.max < config.min) {
    return FieldError(
        "hedge_delay_max",
        absl::StrCat("must be at least hedge_delay_min (",
                     absl::FormatDuration(config.min), "), got ",
                     absl::FormatDuration(config.max)));
  }
  return absl::OkStatus();
}

AdaptiveHedgeDelay::AdaptiveHedgeDelay(const AdaptiveDelayConfig& config,
                                       absl::Duration fixed, double fraction)
    : config_(config),
      fraction_(fraction),
      delay_nanos_(absl::ToInt64Nanoseconds(
          config.enabled
              ? std::clamp(kWarmupDelay, config.min, config.max)
              : fixed)),
      sketch_(CensoredLatencySketch::Options{kWindow, kSlots}) {}

absl::Duration AdaptiveHedgeDelay::DelayFor(
    std::optional<absl::Duration> requested) const {
  if (requested.has_value()) return *requested;
  return absl::Nanoseconds(delay_nanos_.load(std::memory_order_relaxed));
}

absl::Duration AdaptiveHedgeDelay::LateDelayFor(
    std::optional<absl::Duration> requested) const {
  if (!config_.enabled || requested.has_value()) return absl::ZeroDuration();
  return kLateFactor * DelayFor(std::nullopt);
}

void AdaptiveHedgeDelay::ObservePrimary(absl::Time now,
                                        absl::Duration elapsed,
                                        PrimaryEnd end) {
  MutexLock lock(&mu_);
  if (end == PrimaryEnd::kAnswered) {
    sketch_.AddComplete(now, elapsed);
  } else {
    sketch_.AddCensored(now, elapsed);
  }
  if (config_.enabled && now >= next_recompute_) Recompute(now);
}

void AdaptiveHedgeDelay::Recompute(absl::Time now) {
  if (sketch_.complete() + sketch_.censored() < kMinSamples) return;
  next_recompute_ = now + kRecomputeEvery;
  const std::optional<absl::Duration> chosen =
      ChooseHedgeDelay(sketch_, fraction_, DelayRule::kTailOrBody);
  if (!chosen.has_value()) return;
  delay_nanos_.store(
      absl::ToInt64Nanoseconds(std::clamp(*chosen, config_.min, config_.max)),
      std::memory_order_relaxed);
}

std::optional<absl::Duration> AdaptiveHedgeDelay::MedianRemaining(
    absl::Duration elapsed) const {
  MutexLock lock(&mu_);
  if (sketch_.complete() + sketch_.censored() < kMinSamples) {
    return std::nullopt;
  }
  std::optional<CensoredLatencySketch::Quantile> remaining =
      sketch_.MedianRemaining(elapsed);
  if (!remaining.has_value()) return std::nullopt;
  return remaining->value;
}

}  // namespace tailgate::hedge
