// CPU cost of the pure decision path for one read: admission credit, primary
// pick, permits, and the outcome report. Run optimised:
//   bazel run -c opt //hedge/decision:read_decision_benchmark
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "hedge/decision/read_decision.h"
#include "hedge/health/circuit_breaker.h"
#include "hedge/health/replica_load.h"
#include "hedge/health/replica_picker.h"
#include "hedge/policy/admission_limits.h"
#include "hedge/policy/hedge_budget.h"
#include "hedge/policy/retry_budget.h"

namespace tailgate::hedge {
namespace {

struct Policy {
  Policy()
      : breakers_storage(MakeBreakers()),
        breakers{breakers_storage[0].get(), breakers_storage[1].get()},
        loads{&loads_storage[0], &loads_storage[1]},
        picker(breakers, loads, CircuitConfig{}.max_ejected_share),
        budget(HedgeBudgetConfig{0.25, 4}),
        retry_budget(RetryBudgetConfig{}),
        limits(AdmissionConfig{128, 160}) {}

  static std::vector<std::unique_ptr<CircuitBreaker>> MakeBreakers() {
    std::vector<std::unique_ptr<CircuitBreaker>> out;
    out.push_back(std::make_unique<CircuitBreaker>(CircuitConfig{}));
    out.push_back(std::make_unique<CircuitBreaker>(CircuitConfig{}));
    return out;
  }

  std::vector<std::unique_ptr<CircuitBreaker>> breakers_storage;
  std::vector<CircuitBreaker*> breakers;
  ReplicaLoad loads_storage[2];
  std::vector<ReplicaLoad*> loads;
  ReplicaPicker picker;
  HedgeBudget budget;
  RetryBudget retry_budget;
  AdmissionLimits limits;
};

// One read from admission to its winner. With `hedged`, the primary is slow
// and the hedge timer fires first, so the extra attempt wins.
void RunReads(benchmark::State& state, bool hedged) {
  Policy policy;
  const ReadPolicy read_policy{&policy.picker, &policy.budget,
                               &policy.retry_budget, &policy.limits};
  absl::Time now = absl::UnixEpoch();
  for (auto _ : state) {
    auto permit = policy.limits.TryAdmitRequest();
    policy.budget.OnAdmission();
    policy.retry_budget.OnAdmission(now);
    ReadDecision decision(read_policy,
                          ReadOptions{false, absl::Milliseconds(5)});
    benchmark::DoNotOptimize(decision.Start(now));
    if (hedged) {
      now += absl::Milliseconds(5);
      benchmark::DoNotOptimize(decision.OnHedgeTimer(now));
    }
    now += absl::Milliseconds(2);
    const int winner = decision.attempts_launched() - 1;
    benchmark::DoNotOptimize(
        decision.OnAttemptDone(winner, AttemptOutcome::kSuccess, now));
  }
}

void BM_FastPrimary(benchmark::State& state) { RunReads(state, false); }
BENCHMARK(BM_FastPrimary);

void BM_HedgedRead(benchmark::State& state) { RunReads(state, true); }
BENCHMARK(BM_HedgedRead);

// What each admitted read pays each budget, side by side: the hedge
// budget's lock-free earning, and the retry budget's mutex and slice
// bookkeeping (time moving on by 2 ms a read, so slices roll over).
void BM_HedgeBudgetAdmission(benchmark::State& state) {
  HedgeBudget budget(HedgeBudgetConfig{0.1, 2});
  for (auto _ : state) budget.OnAdmission();
}
BENCHMARK(BM_HedgeBudgetAdmission);

void BM_RetryBudgetAdmission(benchmark::State& state) {
  RetryBudget budget(RetryBudgetConfig{});
  absl::Time now = absl::UnixEpoch();
  for (auto _ : state) {
    budget.OnAdmission(now);
    now += absl::Milliseconds(2);
  }
}
BENCHMARK(BM_RetryBudgetAdmission);

}  // namespace
}  // namespace tailgate::hedge
