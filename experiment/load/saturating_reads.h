// RunSaturatingReads: closed-loop saturation through the sidecar.
// `concurrency` reads are kept outstanding (Client::ReadAsync, gRPC's
// callback API): each answer sends the next read from its gRPC thread,
// until `duration` has passed. Answers that arrive within the window are
// counted; every answer is checked.
//
// Thread safety: blocks the calling thread until the last read is
// answered.

#ifndef TAILGATE_EXPERIMENT_LOAD_SATURATING_READS_H_
#define TAILGATE_EXPERIMENT_LOAD_SATURATING_READS_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "experiment/load/load_count.h"

namespace tailgate::experiment {

// An error when any answer is a wrong one (see read_outcome.h).
absl::StatusOr<LoadCount> RunSaturatingReads(Client& client, int concurrency,
                                             absl::Duration duration);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_SATURATING_READS_H_
