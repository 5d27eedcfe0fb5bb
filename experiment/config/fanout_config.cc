#include "experiment/config/fanout_config.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "experiment/config/config_flags.h"

namespace tailgate::experiment {
namespace {

constexpr FanoutPart kParts[] = {FanoutPart::kBatches, FanoutPart::kPerKeyCost,
                                 FanoutPart::kHotKeys};
// Enough batches for a median; a p99.9 wants 1000 or more.
constexpr int64_t kMinBatches = 5;
constexpr int64_t kMaxBatches = 1'000'000;

absl::StatusOr<std::vector<int>> ParseSizes(const std::string& text) {
  std::vector<int> sizes;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    absl::StatusOr<int64_t> size =
        ParseIntegerFlag("fanout_sizes", std::string(item), 1, kMaxFanoutKeys,
                         "(the sidecar's default --max_batch_reads)");
    if (!size.ok()) return size.status();
    if (std::find(sizes.begin(), sizes.end(), *size) != sizes.end()) {
      return InvalidFlag("fanout_sizes", absl::StrCat(item,
                                                      " is listed twice"
                                                      " in \"",
                                                      text, "\""));
    }
    sizes.push_back(static_cast<int>(*size));
  }
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

absl::StatusOr<std::vector<FanoutPart>> ParseParts(const std::string& text) {
  std::vector<bool> given(std::size(kParts));
  for (absl::string_view name : absl::StrSplit(text, ',')) {
    const auto* part = std::find_if(
        std::begin(kParts), std::end(kParts),
        [name](FanoutPart p) { return name == FanoutPartName(p); });
    if (part == std::end(kParts)) {
      return InvalidFlag("fanout_parts",
                         absl::StrCat("want a comma-separated list of batches, "
                                      "per_key_cost and hot_keys, got \"",
                                      text, "\""));
    }
    const size_t i = part - std::begin(kParts);
    if (given[i]) {
      return InvalidFlag("fanout_parts", absl::StrCat(name,
                                                      " is listed twice "
                                                      "in \"",
                                                      text, "\""));
    }
    given[i] = true;
  }
  std::vector<FanoutPart> parts;  // in the order they run
  for (size_t i = 0; i < std::size(kParts); ++i) {
    if (given[i]) parts.push_back(kParts[i]);
  }
  return parts;
}

absl::StatusOr<FanoutCoalesce> ParseCoalesce(const std::string& text) {
  if (text == "auto") return FanoutCoalesce::kAuto;
  if (text == "true") return FanoutCoalesce::kOn;
  if (text == "false") return FanoutCoalesce::kOff;
  return InvalidFlag(
      "fanout_coalesce",
      absl::StrCat("want auto, true or false, got \"", text, "\""));
}

}  // namespace

const char* FanoutPartName(FanoutPart part) {
  switch (part) {
    case FanoutPart::kBatches:
      return "batches";
    case FanoutPart::kPerKeyCost:
      return "per_key_cost";
    case FanoutPart::kHotKeys:
      return "hot_keys";
  }
  return "?";
}

bool FanoutConfig::Runs(FanoutPart part) const {
  return std::find(parts.begin(), parts.end(), part) != parts.end();
}

absl::StatusOr<FanoutConfig> ParseFanoutConfig(const RawFanoutFlags& flags) {
  FanoutConfig config;
  if (!flags.sizes.empty()) {
    absl::StatusOr<std::vector<int>> sizes = ParseSizes(flags.sizes);
    if (!sizes.ok()) return sizes.status();
    config.sizes = *std::move(sizes);
  }
  if (!flags.batches.empty()) {
    absl::StatusOr<int64_t> batches = ParseIntegerFlag(
        "fanout_batches", flags.batches, kMinBatches, kMaxBatches);
    if (!batches.ok()) return batches.status();
    config.batches = *batches;
  }
  if (!flags.parts.empty()) {
    absl::StatusOr<std::vector<FanoutPart>> parts = ParseParts(flags.parts);
    if (!parts.ok()) return parts.status();
    config.parts = *std::move(parts);
  }
  if (!flags.coalesce.empty()) {
    absl::StatusOr<FanoutCoalesce> coalesce = ParseCoalesce(flags.coalesce);
    if (!coalesce.ok()) return coalesce.status();
    config.coalesce = *coalesce;
  }
  return config;
}

}  // namespace tailgate::experiment
