// RetryAfter: how long a replica that gave an overload answer (429, 503)
// asked to be left alone, from its Retry-After header (RFC 9110 10.2.3):
// delta-seconds ("120") or an HTTP-date ("Sun, 06 Nov 1994 08:49:37 GMT",
// also in the obsolete RFC 850 and asctime forms), capped at
// kMaxRetryAfter. A date is read against the wall clock given.
//
// Thread safety: a pure function.

#ifndef TAILGATE_HEDGE_HEALTH_RETRY_AFTER_H_
#define TAILGATE_HEDGE_HEALTH_RETRY_AFTER_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::hedge {

// The longest back-off a Retry-After can ask for: a replica that asks for
// an hour is tried again after this, and asks again if it must.
inline constexpr absl::Duration kMaxRetryAfter = absl::Seconds(30);

// The back-off `value` asks for, in [0, kMaxRetryAfter]: zero for a date
// already past; nullopt for a value that is neither form (then no back-off).
std::optional<absl::Duration> ParseRetryAfter(absl::string_view value,
                                              absl::Time wall_now);

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_HEALTH_RETRY_AFTER_H_
