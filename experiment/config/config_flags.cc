#include "experiment/config/config_flags.h"

#include "absl/strings/str_cat.h"
#include "flags/flag_values.h"

namespace tailgate::experiment {

absl::Status InvalidFlag(absl::string_view flag, absl::string_view message) {
  return flags::ForFlag(flag, absl::InvalidArgumentError(message));
}

absl::StatusOr<int64_t> ParseIntegerFlag(absl::string_view flag,
                                         const std::string& text, int64_t min,
                                         int64_t max, absl::string_view why) {
  absl::StatusOr<int64_t> value = flags::ParseInteger(text);
  if (!value.ok()) return flags::ForFlag(flag, value.status());
  if (*value < min || *value > max) {
    return InvalidFlag(
        flag, absl::StrCat("must be in [", min, ", ", max, "]",
                           why.empty() ? "" : " ", why, ", got ", *value));
  }
  return value;
}

absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view flag,
                                                 const std::string& text,
                                                 absl::Duration min,
                                                 absl::Duration max) {
  absl::StatusOr<absl::Duration> value = flags::ParseDuration(text, min, max);
  if (!value.ok()) return flags::ForFlag(flag, value.status());
  return value;
}

absl::Status ParseGivenDuration(absl::string_view flag, const std::string& text,
                                absl::Duration min, absl::Duration max,
                                absl::Duration& out) {
  if (text.empty()) return absl::OkStatus();
  absl::StatusOr<absl::Duration> value =
      ParseDurationFlag(flag, text, min, max);
  if (!value.ok()) return value.status();
  out = *value;
  return absl::OkStatus();
}

absl::StatusOr<double> ParseRateFlag(absl::string_view flag,
                                     absl::string_view text) {
  absl::StatusOr<double> parsed = flags::ParseNumber(text);
  if (!parsed.ok()) {
    return InvalidFlag(
        flag, absl::StrCat("want a rate in req/s, got \"", text, "\""));
  }
  const double value = *parsed;
  if (value <= 0 || value > kMaxRate) {
    return InvalidFlag(
        flag, absl::StrCat("must be in (0, ", kMaxRate, "] req/s, got ", text));
  }
  return value;
}

}  // namespace tailgate::experiment
