#include "experiment/config/sick_config.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "experiment/config/config_flags.h"

namespace tailgate::experiment {
namespace {

constexpr SickKind kKinds[] = {SickKind::kHang, SickKind::kGray,
                               SickKind::kSlow, SickKind::kHeal};
constexpr int kMaxReplicas = 8;
constexpr int64_t kMaxSeconds = 3600;
// Reads a case may schedule: bounds the reader's memory.
constexpr double kMaxReadsPerCase = 10'000'000;

// Parses each item of the comma-separated `text` with `parse`; an item
// given twice is an error.
template <typename T, typename Parse>
absl::StatusOr<std::vector<T>> ParseList(absl::string_view flag,
                                         const std::string& text, Parse parse) {
  std::vector<T> values;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    absl::StatusOr<T> value = parse(item);
    if (!value.ok()) return value.status();
    if (std::find(values.begin(), values.end(), *value) != values.end()) {
      return InvalidFlag(
          flag, absl::StrCat(item, " is listed twice in \"", text, "\""));
    }
    values.push_back(*value);
  }
  return values;
}

absl::StatusOr<SickKind> ParseKind(absl::string_view name) {
  for (SickKind kind : kKinds) {
    if (name == SickKindName(kind)) return kind;
  }
  return InvalidFlag("sick_kinds",
                     absl::StrCat("want a comma-separated list of hang, gray, "
                                  "slow and heal, got \"",
                                  name, "\""));
}

absl::StatusOr<int> ParseReplicaCount(absl::string_view text) {
  absl::StatusOr<int64_t> count =
      ParseIntegerFlag("sick_replicas", std::string(text), 2, kMaxReplicas,
                       "(one sick replica and at least one healthy)");
  if (!count.ok()) return count.status();
  return static_cast<int>(*count);
}

}  // namespace

const char* SickKindName(SickKind kind) {
  switch (kind) {
    case SickKind::kHang:
      return "hang";
    case SickKind::kGray:
      return "gray";
    case SickKind::kSlow:
      return "slow";
    case SickKind::kHeal:
      return "heal";
  }
  return "?";
}

absl::StatusOr<SickConfig> ParseSickConfig(const RawSickFlags& flags) {
  SickConfig config;
  if (!flags.kinds.empty()) {
    absl::StatusOr<std::vector<SickKind>> kinds =
        ParseList<SickKind>("sick_kinds", flags.kinds, ParseKind);
    if (!kinds.ok()) return kinds.status();
    config.kinds = *std::move(kinds);
  }
  if (!flags.replicas.empty()) {
    absl::StatusOr<std::vector<int>> replicas =
        ParseList<int>("sick_replicas", flags.replicas, ParseReplicaCount);
    if (!replicas.ok()) return replicas.status();
    config.replicas = *std::move(replicas);
  }
  if (!flags.rates.empty()) {
    absl::StatusOr<std::vector<double>> rates = ParseList<double>(
        "sick_rates", flags.rates, [](absl::string_view item) {
          return ParseRateFlag("sick_rates", item);
        });
    if (!rates.ok()) return rates.status();
    config.rates = *std::move(rates);
  }
  if (!flags.seconds.empty()) {
    absl::StatusOr<int64_t> seconds =
        ParseIntegerFlag("sick_seconds", flags.seconds, 1, kMaxSeconds);
    if (!seconds.ok()) return seconds.status();
    config.seconds = absl::Seconds(*seconds);
  }
  // Every case must schedule at least one read.
  for (double rate : config.rates) {
    if (rate * absl::ToDoubleSeconds(config.seconds) < 1) {
      return InvalidFlag("sick_rates",
                         absl::StrCat(rate, " reads/s for --sick_seconds=",
                                      absl::ToInt64Seconds(config.seconds),
                                      " schedules no read"));
    }
    if (rate * absl::ToDoubleSeconds(config.seconds) > kMaxReadsPerCase) {
      return InvalidFlag(
          "sick_rates",
          absl::StrCat(rate, " reads/s for --sick_seconds=",
                       absl::ToInt64Seconds(config.seconds),
                       " schedules more than ", kMaxReadsPerCase, " reads"));
    }
  }
  return config;
}

}  // namespace tailgate::experiment
