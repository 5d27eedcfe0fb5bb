#include "hedge/policy/retry_budget.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hedge/errors/field_error.h"

namespace tailgate::hedge {

absl::Status ValidateRetryBudgetConfig(const RetryBudgetConfig& config) {
  // Written so that NaN fails too.
  // %.10g: "1000001" rather than StrCat's "1e+06".
  if (!(config.fraction >= 0 && config.fraction <= 1)) {
    return FieldError(
        "retry_fraction",
        absl::StrFormat("must be in [0, 1], got %.10g", config.fraction));
  }
  if (!(config.per_second >= 0 && config.per_second <= kMaxRetryPerSecond)) {
    return FieldError("retry_per_second",
                      absl::StrFormat("must be in [0, %.10g], got %.10g",
                                      kMaxRetryPerSecond, config.per_second));
  }
  if (config.window < kMinRetryWindow || config.window > kMaxRetryWindow) {
    return FieldError(
        "retry_window",
        absl::StrCat("must be in [", absl::FormatDuration(kMinRetryWindow),
                     ", ", absl::FormatDuration(kMaxRetryWindow), "], got ",
                     absl::FormatDuration(config.window)));
  }
  return absl::OkStatus();
}

RetryBudget::RetryBudget(const RetryBudgetConfig& config)
    : enabled_(config.fraction > 0 || config.per_second > 0),
      earn_units_(
          static_cast<int64_t>(std::floor(config.fraction * kUnitsPerCredit))),
      // At most 1e6 * 3600 * 1e6 units: far inside int64.
      reserve_units_(static_cast<int64_t>(
          std::floor(config.per_second * absl::ToDoubleSeconds(config.window) *
                     kUnitsPerCredit))),
      slice_(config.window / kSlices) {}

RetryBudget::Slice& RetryBudget::Advance(absl::Time now) const {
  absl::Duration remainder;
  int64_t index =
      absl::IDivDuration(now - absl::UnixEpoch(), slice_, &remainder);
  if (remainder < absl::ZeroDuration()) --index;  // floor, not truncation
  if (index < newest_) index = newest_;
  newest_ = index;
  for (Slice& slice : slices_) {
    if (slice.index <= index - kSlices) {  // kUnused too
      window_units_ -= slice.units;
      slice = Slice();
    }
  }
  Slice& current = slices_[((index % kSlices) + kSlices) % kSlices];
  if (current.index != index) {
    // Unused, or just expired above: nothing of it is in window_units_.
    current.index = index;
    current.units = 0;
  }
  return current;
}

void RetryBudget::OnAdmission(absl::Time now) {
  admitted_.fetch_add(1);
  if (earn_units_ == 0) return;
  MutexLock lock(&mu_);
  Advance(now).units += earn_units_;
  window_units_ += earn_units_;
}

bool RetryBudget::TryConsume(absl::Time now) {
  if (!enabled_) return false;
  {
    MutexLock lock(&mu_);
    Slice& current = Advance(now);
    if (reserve_units_ + window_units_ < kUnitsPerCredit) return false;
    current.units -= kUnitsPerCredit;
    window_units_ -= kUnitsPerCredit;
  }
  consumed_.fetch_add(1);
  return true;
}

double RetryBudget::credits(absl::Time now) const {
  if (!enabled_) return 0;
  MutexLock lock(&mu_);
  Advance(now);
  return static_cast<double>(reserve_units_ + window_units_) / kUnitsPerCredit;
}

}  // namespace tailgate::hedge
