#include "flags/flag_values.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tailgate::flags {

absl::StatusOr<int64_t> ParseInteger(absl::string_view text) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("want an integer, got \"", text, "\""));
  }
  return value;
}

absl::StatusOr<int64_t> ParseInteger(absl::string_view text, int64_t min,
                                     int64_t max) {
  absl::StatusOr<int64_t> value = ParseInteger(text);
  if (value.ok() && (*value < min || *value > max)) {
    return absl::InvalidArgumentError(
        absl::StrCat("must be in [", min, ", ", max, "], got ", *value));
  }
  return value;
}

absl::StatusOr<double> ParseNumber(absl::string_view text) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("want a number, got \"", text, "\""));
  }
  return value;
}

absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text,
                                             Infinite infinite) {
  absl::Duration value;
  const bool parsed = absl::ParseDuration(text, &value);
  const bool is_infinite =
      value == absl::InfiniteDuration() || value == -absl::InfiniteDuration();
  if (!parsed || (is_infinite && infinite == Infinite::kReject)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "want a duration such as 250ms or 1s, got \"", text, "\""));
  }
  return value;
}

absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text,
                                             absl::Duration min,
                                             absl::Duration max) {
  absl::StatusOr<absl::Duration> value = ParseDuration(text);
  if (value.ok() && (*value < min || *value > max)) {
    return absl::InvalidArgumentError(
        absl::StrCat("must be in [", absl::FormatDuration(min), ", ",
                     absl::FormatDuration(max), "], got ", text));
  }
  return value;
}

absl::Status ForFlag(absl::string_view flag, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat("--", flag, ": ", status.message()));
}

}  // namespace tailgate::flags
