// BatchTarget: the fanout scenario's way of reading a batch of keys
// through one target: a sidecar's HedgedRead.ReadMany (grpc_batches.h),
// the same sidecar's Read called once per key at once (grpc_batches.h),
// or an HTTP gateway's GET per key at once (http_batches.h). Every key of
// a batch is read once; the batch ends when its last answer has come.
//
// A key succeeds with a 200 and the workload's body; anything else is
// counted as failed, with the first such error kept (the scenario fails
// the run on any).
//
// Thread safety: ReadBatch blocks the calling thread; one batch at a time
// per target object unless the implementation says otherwise.

#ifndef TAILGATE_EXPERIMENT_LOAD_BATCH_TARGET_H_
#define TAILGATE_EXPERIMENT_LOAD_BATCH_TARGET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace tailgate::experiment {

struct BatchResult {
  absl::Duration latency;  // from the batch's start to its last answer
  // Each key's answer time from the batch's start, in completion order.
  std::vector<absl::Duration> key_latencies;
  // Upstream attempts, from each answer's ReadTrace (gRPC targets; 0 for
  // HTTP, whose answers do not say).
  int64_t attempts = 0;
  int64_t failed = 0;       // keys without a good answer
  std::string first_error;  // "" when none failed
};

class BatchTarget {
 public:
  virtual ~BatchTarget() = default;
  // Reads each of `paths` once (GET), at most the target's in-flight
  // bound at once.
  virtual BatchResult ReadBatch(const std::vector<std::string>& paths) = 0;
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_BATCH_TARGET_H_
