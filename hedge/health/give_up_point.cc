#include "hedge/health/give_up_point.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hedge/errors/field_error.h"

namespace tailgate::hedge {

absl::Status ValidateGiveUpConfig(const GiveUpConfig& config) {
  // Written so that NaN fails too.
  if (!(config.factor == 0 || (config.factor >= 1 && config.factor <= 100))) {
    return FieldError("give_up_factor",
                      absl::StrFormat("must be 0 (off) or in [1, 100], got "
                                      "%.10g",
                                      config.factor));
  }
  if (config.min <= absl::ZeroDuration() || config.min > absl::Hours(1)) {
    return FieldError("give_up_min",
                      absl::StrCat("must be in (0, 1h], got ",
                                   absl::FormatDuration(config.min)));
  }
  if (config.max < config.min || config.max > absl::Hours(1)) {
    return FieldError(
        "give_up_max",
        absl::StrCat("must be in [give_up_min (",
                     absl::FormatDuration(config.min), "), 1h], got ",
                     absl::FormatDuration(config.max)));
  }
  return absl::OkStatus();
}

GiveUpPoint::GiveUpPoint(const GiveUpConfig& config)
    : config_(config),
      sketch_(CensoredLatencySketch::Options{kWindow, 5}) {}

void GiveUpPoint::ObserveAnswer(absl::Time now, absl::Duration latency) {
  MutexLock lock(&mu_);
  sketch_.AddComplete(now, latency);
}

std::optional<absl::Duration> GiveUpPoint::PointFor(absl::Time now,
                                                    absl::Duration prior,
                                                    absl::Duration cap) const {
  if (config_.factor == 0) return std::nullopt;
  MutexLock lock(&mu_);
  if (now - computed_at_ >= kRefresh || now < computed_at_) {
    point_ = Recompute(now);
    computed_at_ = now;
  }
  const absl::Duration point =
      point_.value_or(std::clamp(prior, config_.min, config_.max));
  return std::min(point, cap);
}

std::optional<absl::Duration> GiveUpPoint::Recompute(absl::Time now) const {
  // Answers that left the window must stop counting even if no new one
  // comes (every replica hung, or the traffic went away).
  sketch_.Advance(now);
  learned_ = sketch_.complete() >= static_cast<uint64_t>(kMinSamples);
  if (!learned_) return std::nullopt;
  const std::optional<CensoredLatencySketch::Quantile> q =
      sketch_.QuantileOf(kQuantile);
  if (!q.has_value()) return std::nullopt;
  return std::clamp(q->value * config_.factor, config_.min, config_.max);
}

bool GiveUpPoint::learned() const {
  MutexLock lock(&mu_);
  return learned_;
}

}  // namespace tailgate::hedge
