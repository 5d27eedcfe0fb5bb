// TestReplicas: circuit breakers, loads and a ReplicaPicker over them, for
// tests of ReadDecision that need replicas that are never ejected.
//
// Thread safety: as ReplicaPicker and CircuitBreaker.

#ifndef TAILGATE_HEDGE_DECISION_TESTING_REPLICAS_H_
#define TAILGATE_HEDGE_DECISION_TESTING_REPLICAS_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "hedge/health/circuit_breaker.h"
#include "hedge/health/replica_load.h"
#include "hedge/health/replica_picker.h"

namespace tailgate::hedge {

class TestReplicas {
 public:
  // `count` replicas in a set that may eject none of them.
  explicit TestReplicas(size_t count) {
    std::vector<CircuitBreaker*> breakers;
    std::vector<ReplicaLoad*> loads;
    for (size_t i = 0; i < count; ++i) {
      breakers_.push_back(std::make_unique<CircuitBreaker>(CircuitConfig{}));
      loads_.push_back(std::make_unique<ReplicaLoad>());
      breakers.push_back(breakers_.back().get());
      loads.push_back(loads_.back().get());
    }
    picker_ = std::make_unique<ReplicaPicker>(breakers, loads,
                                              /*max_ejected_share=*/0);
  }

  ReplicaPicker* picker() { return picker_.get(); }
  CircuitBreaker& breaker(size_t replica) { return *breakers_[replica]; }

 private:
  std::vector<std::unique_ptr<CircuitBreaker>> breakers_;
  std::vector<std::unique_ptr<ReplicaLoad>> loads_;
  std::unique_ptr<ReplicaPicker> picker_;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_DECISION_TESTING_REPLICAS_H_
