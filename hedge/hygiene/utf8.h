// Text that a proto3 `string` field can carry.
//
// Protobuf parsers in every language reject a `string` field that is not
// valid UTF-8, so bytes a replica sends in a header value must be made
// valid before they go into ReadResponse.headers. Thread-compatible: pure
// functions.
#ifndef TAILGATE_HEDGE_HYGIENE_UTF8_H_
#define TAILGATE_HEDGE_HYGIENE_UTF8_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tailgate::hygiene {

// True when `text` is well-formed UTF-8 (RFC 3629): no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no cut sequence.
bool IsValidUtf8(absl::string_view text);

// Each byte of `latin1` as the ISO-8859-1 character it stands for, encoded
// in UTF-8 (bytes 0x80..0xFF become two bytes each). Lossless: encoding the
// result back to ISO-8859-1 gives `latin1`.
std::string Latin1ToUtf8(absl::string_view latin1);

// The rule for header values from replicas: valid UTF-8 is kept as is;
// anything else is read as ISO-8859-1 (HTTP's historical charset for field
// values, RFC 9110 section 5.5) and re-encoded by Latin1ToUtf8. Sets
// `*converted` (when not null) to whether the value changed.
std::string HeaderValueAsUtf8(std::string value, bool* converted = nullptr);

}  // namespace tailgate::hygiene

#endif  // TAILGATE_HEDGE_HYGIENE_UTF8_H_
