#include "hedge/errors/field_error.h"

#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tailgate::hedge {
namespace {

// The payload's type URL; its value is the field's name.
constexpr absl::string_view kFieldPayload = "tailgate.hedge.ConfigField";

}  // namespace

absl::Status FieldError(absl::string_view field, absl::string_view problem) {
  absl::Status status =
      absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
  status.SetPayload(kFieldPayload, absl::Cord(field));
  return status;
}

std::optional<std::string> ErrorField(const absl::Status& status) {
  absl::optional<absl::Cord> field = status.GetPayload(kFieldPayload);
  if (!field.has_value()) return std::nullopt;
  return std::string(*field);
}

absl::string_view ErrorProblem(const absl::Status& status) {
  absl::string_view message = status.message();
  if (std::optional<std::string> field = ErrorField(status)) {
    message = absl::StripPrefix(message, absl::StrCat(*field, ": "));
  }
  return message;
}

absl::Status PrefixField(absl::string_view prefix, absl::Status status) {
  std::optional<std::string> field = ErrorField(status);
  if (!field.has_value()) return status;
  return FieldError(absl::StrCat(prefix, *field), ErrorProblem(status));
}

}  // namespace tailgate::hedge
