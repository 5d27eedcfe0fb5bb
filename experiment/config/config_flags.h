// Parsers for the experiment's flag values, each naming its flag in the
// error ("--requests: must be in [100, 10000000] ..."), shared by the
// general flags (experiment_config.h) and the scenario-specific ones
// (sick_config.h). The wording of a bad value is flags/flag_values.h's.
//
// Thread safety: pure functions.

#ifndef TAILGATE_EXPERIMENT_CONFIG_CONFIG_FLAGS_H_
#define TAILGATE_EXPERIMENT_CONFIG_CONFIG_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::experiment {

// The largest offered load any scenario takes, req/s.
inline constexpr int64_t kMaxRate = 1'000'000;

// INVALID_ARGUMENT "--flag: message".
absl::Status InvalidFlag(absl::string_view flag, absl::string_view message);

// An integer in [min, max]; `why`, when not empty, explains the range in
// the error message.
absl::StatusOr<int64_t> ParseIntegerFlag(absl::string_view flag,
                                         const std::string& text, int64_t min,
                                         int64_t max,
                                         absl::string_view why = "");

// A finite duration with a unit in [min, max].
absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view flag,
                                                 const std::string& text,
                                                 absl::Duration min,
                                                 absl::Duration max);

// Parses `text` into `out`, unless it is empty (the flag was not given).
absl::Status ParseGivenDuration(absl::string_view flag, const std::string& text,
                                absl::Duration min, absl::Duration max,
                                absl::Duration& out);

// An offered load in req/s, in (0, kMaxRate].
absl::StatusOr<double> ParseRateFlag(absl::string_view flag,
                                     absl::string_view text);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_CONFIG_CONFIG_FLAGS_H_
