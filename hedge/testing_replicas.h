// TestReplicas: circuit breakers and a ReplicaPicker over them, for tests
// of ReadDecision that need replicas whose circuits never open.
//
// Thread safety: as ReplicaPicker and CircuitBreaker.

#ifndef TAILGATE_HEDGE_TESTING_REPLICAS_H_
#define TAILGATE_HEDGE_TESTING_REPLICAS_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "hedge/circuit_breaker.h"
#include "hedge/replica_picker.h"

namespace tailgate::hedge {

class TestReplicas {
 public:
  // `count` replicas whose circuits open only after 1000 failures in a row.
  explicit TestReplicas(size_t count) {
    std::vector<CircuitBreaker*> raw;
    for (size_t i = 0; i < count; ++i) {
      breakers_.push_back(std::make_unique<CircuitBreaker>(
          CircuitConfig{1000, absl::Seconds(1)}));
      raw.push_back(breakers_.back().get());
    }
    picker_ = std::make_unique<ReplicaPicker>(raw);
  }

  ReplicaPicker* picker() { return picker_.get(); }

 private:
  std::vector<std::unique_ptr<CircuitBreaker>> breakers_;
  std::unique_ptr<ReplicaPicker> picker_;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_TESTING_REPLICAS_H_
