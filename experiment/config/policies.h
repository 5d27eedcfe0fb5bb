// The two sidecar policies every scenario compares, as the sidecar's own
// flags, exactly those of the Go gateway's straggler study:
//   baseline  --hedge_fraction=0: no extra attempt of any kind
//   hedged    --hedge_delay=5ms --hedge_fraction=0.25 --hedge_burst=4
//
// Thread safety: immutable data.

#ifndef TAILGATE_EXPERIMENT_CONFIG_POLICIES_H_
#define TAILGATE_EXPERIMENT_CONFIG_POLICIES_H_

#include <string>
#include <vector>

namespace tailgate::experiment {

struct Policy {
  std::string mode;                // the "mode" field of the output lines
  std::vector<std::string> flags;  // added to the sidecar's command line
};

// Baseline first, then hedged: the order of the output lines.
const std::vector<Policy>& ComparedPolicies();

// The sequential scenarios' (seed, correlated, shifting): the two above,
// then
//   auto  --hedge_delay=auto --hedge_fraction=0.25 --hedge_burst=4
// hedged's budget with the delay learned instead of tuned by hand.
const std::vector<Policy>& StragglerPolicies();

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_CONFIG_POLICIES_H_
