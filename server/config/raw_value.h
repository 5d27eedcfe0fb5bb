// RawValue: a setting's value as given, before it is checked: the text of
// a flag ("0.25", "25ms"), or a number the config file typed (0.25 as a
// double, 256 as an integer). FlagReader parses text and takes numbers as
// they are, so a file's value is never written out as text to be parsed
// again.
//
// Thread safety: a plain value.

#ifndef TAILGATE_SERVER_CONFIG_RAW_VALUE_H_
#define TAILGATE_SERVER_CONFIG_RAW_VALUE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"

namespace tailgate::server {

class RawValue {
 public:
  RawValue() = default;
  // Text, as a flag gives it; "" is no value.
  RawValue(std::string text) : value_(std::move(text)) {}    // NOLINT
  RawValue(const char* text) : value_(std::string(text)) {}  // NOLINT

  static RawValue Integer(int64_t value) { return RawValue(Typed(value)); }
  static RawValue Number(double value) { return RawValue(Typed(value)); }

  bool empty() const {
    const std::string* text = std::get_if<std::string>(&value_);
    return text != nullptr && text->empty();
  }
  // Null unless the value is text.
  const std::string* text() const { return std::get_if<std::string>(&value_); }
  const int64_t* integer() const { return std::get_if<int64_t>(&value_); }
  const double* number() const { return std::get_if<double>(&value_); }

  // For messages: the text as given, or the number.
  std::string ToString() const {
    if (const std::string* t = text()) return *t;
    if (const int64_t* i = integer()) return absl::StrCat(*i);
    return absl::StrCat(*number());
  }

  bool operator==(const RawValue& other) const {
    return value_ == other.value_;
  }

 private:
  using Typed = std::variant<std::string, int64_t, double>;
  explicit RawValue(Typed value) : value_(std::move(value)) {}

  Typed value_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_RAW_VALUE_H_
