#include "hedge/health/retry_after.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"

namespace tailgate::hedge {

std::optional<absl::Duration> ParseRetryAfter(absl::string_view value,
                                              absl::Time wall_now) {
  value = absl::StripAsciiWhitespace(value);
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), absl::ascii_isdigit)) {
    // Any number of digits: past the cap (however long) is the cap.
    int64_t seconds = 0;
    for (char c : value) {
      seconds = seconds * 10 + (c - '0');
      if (seconds >= absl::ToInt64Seconds(kMaxRetryAfter)) {
        return kMaxRetryAfter;
      }
    }
    return absl::Seconds(seconds);
  }
  // IMF-fixdate, then RFC 850 and asctime (RFC 9110 5.6.7).
  static constexpr const char* kFormats[] = {
      "%a, %d %b %Y %H:%M:%S GMT",
      "%A, %d-%b-%y %H:%M:%S GMT",
      "%a %b %e %H:%M:%S %Y",
  };
  const std::string text(value);
  for (const char* format : kFormats) {
    absl::Time at;
    if (absl::ParseTime(format, text, absl::UTCTimeZone(), &at, nullptr)) {
      return std::clamp(at - wall_now, absl::ZeroDuration(), kMaxRetryAfter);
    }
  }
  return std::nullopt;
}

}  // namespace tailgate::hedge
