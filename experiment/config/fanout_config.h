// The fanout scenario's flags (--fanout_sizes, --fanout_batches,
// --fanout_parts, --fanout_coalesce), parsed and validated. README.md
// ("--scenario=fanout") describes them.
//
// Thread safety: pure functions and plain data.

#ifndef TAILGATE_EXPERIMENT_CONFIG_FANOUT_CONFIG_H_
#define TAILGATE_EXPERIMENT_CONFIG_FANOUT_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tailgate::experiment {

// The parts of the fanout scenario, run in this order.
enum class FanoutPart {
  kBatches,     // "batches": batch latency per arm and batch size
  kPerKeyCost,  // "per_key_cost": one ReadMany vs concurrent Read calls
  kHotKeys,     // "hot_keys": Zipf-distributed keys, coalescing off and on
};

// "batches", "per_key_cost", "hot_keys".
const char* FanoutPartName(FanoutPart part);

// Whether the hot-key part also measures a sidecar with --coalesce.
enum class FanoutCoalesce {
  kAuto,  // "auto": when the tailgate binary takes --coalesce
  kOn,    // "true": always (a binary without the flag fails the run)
  kOff,   // "false": coalescing off only
};

// The flag values as given; empty means "not given".
struct RawFanoutFlags {
  std::string sizes;
  std::string batches;
  std::string parts;
  std::string coalesce;

  bool AnyGiven() const {
    return !sizes.empty() || !batches.empty() || !parts.empty() ||
           !coalesce.empty();
  }
};

// The sidecar's default --max_batch_reads: the largest batch.
inline constexpr int kMaxFanoutKeys = 1000;

struct FanoutConfig {
  std::vector<int> sizes = {100, 1000};  // keys per batch, ascending
  int64_t batches = 2000;                // per arm and size
  std::vector<FanoutPart> parts = {
      FanoutPart::kBatches, FanoutPart::kPerKeyCost, FanoutPart::kHotKeys};
  FanoutCoalesce coalesce = FanoutCoalesce::kAuto;

  bool Runs(FanoutPart part) const;
};

// Lists are comma-separated with no value twice; a flag left empty keeps
// its default. Errors name the flag.
absl::StatusOr<FanoutConfig> ParseFanoutConfig(const RawFanoutFlags& flags);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_CONFIG_FANOUT_CONFIG_H_
