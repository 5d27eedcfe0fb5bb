#include "experiment/policies.h"

namespace tailgate::experiment {

const std::vector<Policy>& ComparedPolicies() {
  static const auto* const policies = new std::vector<Policy>{
      {"baseline", {"--hedge_fraction=0"}},
      {"hedged",
       {"--hedge_delay=5ms", "--hedge_fraction=0.25", "--hedge_burst=4"}},
  };
  return *policies;
}

}  // namespace tailgate::experiment
