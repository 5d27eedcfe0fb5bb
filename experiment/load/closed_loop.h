// RunSequentialReads: the seed's client. One read at a time through the
// sidecar, the next sent when the previous answer is in; each answer
// checked, each latency measured around the blocking call on the monotonic
// clock.
//
// Thread safety: blocks the calling thread; `client` is shared safely.

#ifndef TAILGATE_EXPERIMENT_LOAD_CLOSED_LOOP_H_
#define TAILGATE_EXPERIMENT_LOAD_CLOSED_LOOP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "experiment/load/progress.h"

namespace tailgate::experiment {

// One measured read: what the client saw and what the sidecar reported of
// itself (ReadTrace), so that the gRPC round trip can be told apart from
// the sidecar's own time.
struct SequentialRead {
  absl::Duration latency;          // around the blocking call, client side
  absl::Duration sidecar_latency;  // ReadTrace.latency: admission to answer
  bool hedged = false;             // ReadTrace.hedged
};

// Reads path(first), path(first + 1), ..., path(first + count - 1) in
// order, telling `progress` first + the reads done; the reads in the same
// order. Any read that is not a 200 "replicated-value" stops the
// run with an error naming it: a sequential client at this load must never
// be rejected, time out or see a wrong body. `tenant`: ReadRequest.tenant.
absl::StatusOr<std::vector<SequentialRead>> RunSequentialReads(
    Client& client, int64_t count,
    const std::function<std::string(int64_t)>& path, Progress& progress,
    int64_t first = 0, const std::string& tenant = "");

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_CLOSED_LOOP_H_
