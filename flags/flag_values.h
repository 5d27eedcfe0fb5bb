// Parsers for command-line values taken as text, shared by tailgate, the
// experiment and the command-line client, so every tool words a bad value
// the same way:
//   want an integer, got "12x"
//   must be in [1, 1000], got 0
//   want a duration such as 250ms or 1s, got "5"
//
// Example:
//   absl::StatusOr<int64_t> n = ParseInteger(text, 1, 1000);
//   if (!n.ok()) return ForFlag("requests", n.status());  // "--requests: ..."
//
// Messages name no flag: ForFlag prefixes one, and a tool whose options
// have another form (the client's) prefixes its own.
//
// Thread safety: pure functions; safe from any thread.

#ifndef TAILGATE_FLAGS_FLAG_VALUES_H_
#define TAILGATE_FLAGS_FLAG_VALUES_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::flags {

absl::StatusOr<int64_t> ParseInteger(absl::string_view text);
// Also checks min <= value <= max.
absl::StatusOr<int64_t> ParseInteger(absl::string_view text, int64_t min,
                                     int64_t max);

// A finite number.
absl::StatusOr<double> ParseNumber(absl::string_view text);

// A duration with a unit ("250ms", "1.5s"); "inf" only if allowed.
enum class Infinite { kReject, kAllow };
absl::StatusOr<absl::Duration> ParseDuration(
    absl::string_view text, Infinite infinite = Infinite::kReject);
// A finite duration with min <= value <= max.
absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text,
                                             absl::Duration min,
                                             absl::Duration max);

// `status` (not OK) as "--flag: message", with its code.
absl::Status ForFlag(absl::string_view flag, const absl::Status& status);

}  // namespace tailgate::flags

#endif  // TAILGATE_FLAGS_FLAG_VALUES_H_
