#include "experiment/config/workload.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tailgate::experiment {
namespace {

constexpr absl::string_view kReadPrefix = "/read?id=";
constexpr absl::string_view kWarmupPrefix = "/warmup?n=";
constexpr absl::string_view kSlowPrefix = "/slow?n=";
constexpr absl::string_view kHotPrefix = "/hot?k=";

// The number after `prefix`, if `target` is exactly prefix + digits.
std::optional<uint64_t> NumberAfter(absl::string_view target,
                                    absl::string_view prefix) {
  if (!absl::ConsumePrefix(&target, prefix)) return std::nullopt;
  uint64_t n = 0;
  if (target.empty() || target[0] == '+' || !absl::SimpleAtoi(target, &n)) {
    return std::nullopt;
  }
  return n;
}

}  // namespace

std::string ReadPath(uint64_t id) { return absl::StrCat(kReadPrefix, id); }

std::string WarmupPath(uint64_t n) { return absl::StrCat(kWarmupPrefix, n); }

std::string SlowPath(uint64_t n) { return absl::StrCat(kSlowPrefix, n); }

std::string HotPath(uint64_t key) { return absl::StrCat(kHotPrefix, key); }

absl::Duration ReadDelay(StragglerMix mix, ReplicaName replica, uint64_t id) {
  const uint64_t slot = id % 10;
  switch (mix) {
    case StragglerMix::kSeed:
      return slot == static_cast<uint64_t>(replica) ? kSlowDelay : kFastDelay;
    case StragglerMix::kSeedAnyPhase:
      return slot / 2 == static_cast<uint64_t>(replica) ? kSlowDelay
                                                        : kFastDelay;
    case StragglerMix::kCorrelated:
      return slot == 0 ? kSlowDelay : kFastDelay;
    case StragglerMix::kShifting:
      if (slot == static_cast<uint64_t>(replica)) return kSlowDelay;
      return (id / kShiftPhaseIds) % 3 == 1 ? kShiftedDelay : kFastDelay;
    case StragglerMix::kFanout:
      return id % 100 == 50 * static_cast<uint64_t>(replica) ? kSlowDelay
                                                             : kFastDelay;
    case StragglerMix::kNone:
      break;
  }
  return absl::ZeroDuration();
}

uint64_t ShiftingReadId(int64_t index, int64_t count) {
  const int64_t phase = index * 3 / count;
  const int64_t phase_start = (phase * count + 2) / 3;  // first index in it
  return static_cast<uint64_t>(phase) * kShiftPhaseIds +
         static_cast<uint64_t>(index - phase_start + phase_start % 10);
}

std::optional<absl::Duration> DelayForTarget(StragglerMix mix,
                                             ReplicaName replica,
                                             absl::string_view target) {
  if (std::optional<uint64_t> id = NumberAfter(target, kReadPrefix)) {
    return ReadDelay(mix, replica, *id);
  }
  if (NumberAfter(target, kWarmupPrefix).has_value() ||
      NumberAfter(target, kHotPrefix).has_value()) {
    return mix == StragglerMix::kNone ? absl::ZeroDuration() : kFastDelay;
  }
  if (NumberAfter(target, kSlowPrefix).has_value()) return kSlowDelay;
  return std::nullopt;
}

}  // namespace tailgate::experiment
