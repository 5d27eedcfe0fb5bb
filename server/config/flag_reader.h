// FlagReader: parses flag values (flag_values.h), and takes the config
// file's typed numbers (raw_value.h), for ConfigFromRawFlags,
// keeping the first error, worded with the flag's name or, for a value
// that came from the config file, its place there.
//
// Thread safety: not thread-safe; one reader per parse.

#ifndef TAILGATE_SERVER_CONFIG_FLAG_READER_H_
#define TAILGATE_SERVER_CONFIG_FLAG_READER_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "flags/flag_values.h"
#include "server/config/raw_value.h"
#include "server/net/listen_address.h"

namespace tailgate::server {

// Parses flag values, keeping the first error; after an error the values it
// returns are placeholders and status() tells the caller to stop.
class FlagReader {
 public:
  // `locations` (may be null; must outlive the reader): values that came
  // from the config file, by key (RawFlags::file_locations).
  explicit FlagReader(
      const absl::flat_hash_map<std::string, std::string>* locations)
      : locations_(locations) {}

  // An integer from text, or one the config file typed.
  int64_t Integer(absl::string_view flag, const RawValue& value) {
    if (const int64_t* typed = value.integer()) return *typed;
    if (value.number() != nullptr) {
      Fail(flag, absl::StrCat("want an integer, got ", value.ToString()));
      return 0;
    }
    return Take(flag, flags::ParseInteger(*value.text()), int64_t{0});
  }

  // An integer in [min, max] (flags::ParseInteger's words).
  int64_t IntegerIn(absl::string_view flag, const RawValue& value, int64_t min,
                    int64_t max) {
    const int64_t parsed = Integer(flag, value);
    if (status_.ok() && (parsed < min || parsed > max)) {
      Fail(flag,
           absl::StrCat("must be in [", min, ", ", max, "], got ", parsed));
    }
    return parsed;
  }

  // An integer that fits an int; the rest of its range is checked by its
  // owner.
  int Int(absl::string_view flag, const RawValue& value) {
    const int64_t parsed = Integer(flag, value);
    if (parsed > std::numeric_limits<int>::max()) {
      Fail(flag,
           absl::StrCat("must be at most ", std::numeric_limits<int>::max(),
                        ", got ", value.ToString()));
    } else if (parsed < std::numeric_limits<int>::min()) {
      Fail(flag,
           absl::StrCat("must be at least ", std::numeric_limits<int>::min(),
                        ", got ", value.ToString()));
    } else {
      return static_cast<int>(parsed);
    }
    return 0;
  }

  // A finite number from text, or one the config file typed.
  double Number(absl::string_view flag, const RawValue& value) {
    if (const double* typed = value.number()) {
      if (std::isfinite(*typed)) return *typed;
      Fail(flag, absl::StrCat("want a number, got \"", *typed, "\""));
      return 0.0;
    }
    if (const int64_t* typed = value.integer()) {
      return static_cast<double>(*typed);
    }
    return Take(flag, flags::ParseNumber(*value.text()), 0.0);
  }

  absl::Duration Duration(absl::string_view flag, const std::string& text) {
    return Take(flag, flags::ParseDuration(text), absl::ZeroDuration());
  }

  ListenAddress Address(absl::string_view flag, const std::string& text) {
    return Take(flag, ParseListenAddress(text), ListenAddress());
  }

  template <typename T>
  T Take(absl::string_view flag, absl::StatusOr<T> value, T placeholder) {
    if (value.ok()) return *std::move(value);
    Fail(flag, value.status().message());
    return placeholder;
  }

  // `key` is a flag's name, or a config file key (RawFlags::file_locations)
  // when the value came from the file.
  void Fail(absl::string_view key, absl::string_view problem) {
    if (!status_.ok()) return;
    if (locations_ != nullptr) {
      if (auto it = locations_->find(key); it != locations_->end()) {
        status_ = absl::InvalidArgumentError(
            absl::StrCat(it->second, ": ", key, ": ", problem));
        return;
      }
    }
    status_ = flags::ForFlag(key, absl::InvalidArgumentError(problem));
  }

  // Keeps `status` if no error came first.
  void Adopt(const absl::Status& status) {
    if (status_.ok()) status_ = status;
  }

  const absl::Status& status() const { return status_; }

 private:
  const absl::flat_hash_map<std::string, std::string>* const locations_;
  absl::Status status_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_FLAG_READER_H_
