// RunOpenLoop: an open-loop load generator. Read i (GET /read?id=i, the
// straggler mix) is scheduled at t0 + i / rate and sent then, whether or
// not earlier reads have answered: a slow answer does not delay the next
// send, and each read's latency is measured from its *scheduled* time, so
// a generator that falls behind shows up as latency instead of being
// hidden (no coordinated omission).
//
// Sends are asynchronous (Client::ReadAsync, gRPC's callback API); answers
// are recorded on gRPC's threads. Rejected reads (RESOURCE_EXHAUSTED: the
// sidecar never queues) and failed reads are counted, not timed. A read
// that would exceed `max_outstanding` unanswered reads is not sent and is
// counted as dropped: that is the generator's own limit, reported so that
// it is never mistaken for the sidecar's.
//
// Thread safety: blocks the calling thread, which does the scheduling.

#ifndef TAILGATE_EXPERIMENT_OPEN_LOOP_H_
#define TAILGATE_EXPERIMENT_OPEN_LOOP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "experiment/progress.h"

namespace tailgate::experiment {

struct OpenLoopOptions {
  double rate = 1000;  // scheduled reads per second
  absl::Duration duration = absl::Seconds(5);
  absl::Duration deadline = absl::Seconds(2);  // per read
  int64_t max_outstanding = 20000;
};

struct OpenLoopResult {
  int64_t scheduled = 0;
  int64_t sent = 0;
  int64_t ok = 0;
  int64_t rejected = 0;
  int64_t failed = 0;
  int64_t dropped = 0;  // not sent: max_outstanding reached
  // Of the ok reads, from scheduled send to answer, ascending.
  std::vector<absl::Duration> latencies;
  // From the first scheduled send to the last answer.
  absl::Duration elapsed;

  // ok reads per second of `elapsed`.
  double AchievedRps() const {
    const double seconds = absl::ToDoubleSeconds(elapsed);
    return seconds > 0 ? static_cast<double>(ok) / seconds : 0;
  }
};

// Returns once every sent read has been answered (each has a deadline). An
// error when any answer is a wrong one (see read_outcome.h).
absl::StatusOr<OpenLoopResult> RunOpenLoop(Client& client,
                                           const OpenLoopOptions& options,
                                           Progress& progress);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_OPEN_LOOP_H_
