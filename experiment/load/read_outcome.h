// ReadOutcome: how one read through the sidecar ended, as the experiment
// counts it. Every answer is checked: the workload's replicas always answer
// 200 "replicated-value", so anything else that arrives as an OK answer is
// a wrong answer, never a latency sample.
//
// Thread safety: pure functions.

#ifndef TAILGATE_EXPERIMENT_LOAD_READ_OUTCOME_H_
#define TAILGATE_EXPERIMENT_LOAD_READ_OUTCOME_H_

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client.h"

namespace tailgate::experiment {

enum class ReadOutcome {
  kOk,           // 200 with the workload's body
  kRejected,     // RESOURCE_EXHAUSTED: the sidecar's admission was full
  kFailed,       // any other gRPC error, or an HTTP status other than 200
  kWrongAnswer,  // 200 with another body: a correctness bug, fatal
};

ReadOutcome Classify(const absl::StatusOr<ReadResponse>& result);

// "read /read?id=7: <what went wrong>", for an outcome other than kOk.
std::string DescribeFailure(absl::string_view path,
                            const absl::StatusOr<ReadResponse>& result);

// The time since `start` on the monotonic clock.
inline absl::Duration Since(std::chrono::steady_clock::time_point start) {
  return absl::FromChrono(std::chrono::steady_clock::now() - start);
}

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_READ_OUTCOME_H_
