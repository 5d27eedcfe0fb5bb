// FieldError: an INVALID_ARGUMENT that names the configuration field at
// fault, for every validator of Tailgate's configuration.
//
// Example:
//   if (config.fraction > 1) {
//     return FieldError("hedge_fraction",
//                       absl::StrCat("must be in [0, 1], got ", fraction));
//   }
//   ...
//   absl::Status s = ValidateEngineConfig(config);
//   if (std::optional<std::string> field = ErrorField(s)) {
//     // e.g. map *field to the flag or config-file key that set it, and
//     // print it with ErrorProblem(s).
//   }
//
// The message reads "field: problem", so an error printed as it is still
// names its field. The field is also attached as a payload, so that a
// caller maps it to its own vocabulary (a flag, a key in a config file)
// without parsing message text.
//
// Field names are the configuration's own (`hedge_fraction`,
// `max_requests`, `replicas`, ...). A field of a named upstream other than
// the default one is prefixed with `upstreams.NAME.`.
//
// Thread safety: pure functions over values; safe from any thread.

#ifndef TAILGATE_HEDGE_ERRORS_FIELD_ERROR_H_
#define TAILGATE_HEDGE_ERRORS_FIELD_ERROR_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tailgate::hedge {

// INVALID_ARGUMENT with message "field: problem" and `field` attached.
absl::Status FieldError(absl::string_view field, absl::string_view problem);

// The field a FieldError names; nullopt for any other status (OK included).
std::optional<std::string> ErrorField(const absl::Status& status);

// What is wrong, without the field: "must be in [0, 1], got 1.5". For a
// status that is not a FieldError, its whole message.
absl::string_view ErrorProblem(const absl::Status& status);

// The same error, its field renamed to `prefix` + field ("upstreams.a." +
// "hedge_delay"). Any other status is returned as it is.
absl::Status PrefixField(absl::string_view prefix, absl::Status status);

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_ERRORS_FIELD_ERROR_H_
