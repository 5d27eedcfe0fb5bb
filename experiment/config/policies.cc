#include "experiment/config/policies.h"

namespace tailgate::experiment {

const std::vector<Policy>& ComparedPolicies() {
  static const auto* const policies = new std::vector<Policy>{
      // No timer hedge and no give-up: the primary alone, unless it fails.
      {"baseline", {"--hedge_fraction=0", "--give_up_factor=0"}},
      {"hedged",
       {"--hedge_delay=5ms", "--hedge_fraction=0.25", "--hedge_burst=4"}},
  };
  return *policies;
}

const std::vector<Policy>& StragglerPolicies() {
  static const auto* const policies = [] {
    auto* all = new std::vector<Policy>(ComparedPolicies());
    all->push_back({"auto",
                    {"--hedge_delay=auto", "--hedge_fraction=0.25",
                     "--hedge_burst=4"}});
    return all;
  }();
  return *policies;
}

}  // namespace tailgate::experiment
