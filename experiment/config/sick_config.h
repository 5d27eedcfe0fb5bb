// The sick scenario's flags (--sick_kinds, --sick_replicas, --sick_rates,
// --sick_seconds), parsed and validated, and the kinds of sickness its last
// replica can have. README.md ("--scenario=sick") describes them.
//
// Thread safety: pure functions and plain data.

#ifndef TAILGATE_EXPERIMENT_CONFIG_SICK_CONFIG_H_
#define TAILGATE_EXPERIMENT_CONFIG_SICK_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::experiment {

// How the sick replica (the last of a case's replicas) misbehaves.
enum class SickKind {
  kHang,  // "hang": reads every request, never answers
  kGray,  // "gray": never answers every other request it receives
  kSlow,  // "slow": answers every request after kSlowReplicaDelay
  kHeal,  // "heal": hangs until kHealAfter into the case, then is healthy
};

inline constexpr absl::Duration kSlowReplicaDelay = absl::Milliseconds(300);
inline constexpr absl::Duration kHealAfter = absl::Seconds(10);

// "hang", "gray", "slow", "heal".
const char* SickKindName(SickKind kind);

// The flag values as given; empty means "not given".
struct RawSickFlags {
  std::string kinds;
  std::string replicas;
  std::string rates;
  std::string seconds;

  bool AnyGiven() const {
    return !kinds.empty() || !replicas.empty() || !rates.empty() ||
           !seconds.empty();
  }
};

// The case matrix: every kind x replicas x rate, in this order.
struct SickConfig {
  std::vector<SickKind> kinds = {SickKind::kHang, SickKind::kGray,
                                 SickKind::kSlow, SickKind::kHeal};
  std::vector<int> replicas = {2, 3};   // each >= 2: one healthy, one sick
  std::vector<double> rates = {2, 20};  // reads per second
  absl::Duration seconds = absl::Seconds(30);  // of reads, per case and target
};

// Each list is comma-separated with no value twice; a flag left empty keeps
// its default. Errors name the flag.
absl::StatusOr<SickConfig> ParseSickConfig(const RawSickFlags& flags);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_CONFIG_SICK_CONFIG_H_
