// RunSteadyReads: the sick scenario's reader, one steady open loop. Read i
// (GET /read?id=i) is scheduled at t0 + i / rate and sent then whatever
// earlier reads are doing, with its own deadline; its latency counts from
// its scheduled time. Unlike RunOpenLoop (open_loop.h) it keeps a record
// per read, when it was due and how it ended, for per-second figures, and
// reads through any ReadTarget: tailgate over gRPC (grpc_read_target.h)
// or an HTTP gateway (http_read_target.h).
//
// A read succeeds when it gets a 200 with the workload's body before its
// deadline; anything else is recorded with a short label saying what it
// got: the gRPC code ("DEADLINE_EXCEEDED"), "http_<status>", "timeout" or
// another transport label (HTTP targets), or "wrong_body".
//
// Thread safety: RunSteadyReads blocks the calling thread, which does the
// scheduling; a ReadTarget's callbacks may run on any thread.

#ifndef TAILGATE_EXPERIMENT_LOAD_STEADY_READS_H_
#define TAILGATE_EXPERIMENT_LOAD_STEADY_READS_H_

#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "experiment/load/progress.h"

namespace tailgate::experiment {

inline constexpr char kWrongBody[] = "wrong_body";

// How one read ended.
struct ReadRecord {
  absl::Duration scheduled;  // from the first scheduled send
  absl::Duration latency;    // from the scheduled send to the end
  std::string error;         // empty: ok
};

// Where the reader's reads go.
class ReadTarget {
 public:
  // "" for a 200 with the workload's body, else what the read got.
  using Done = absl::AnyInvocable<void(std::string error) &&>;

  virtual ~ReadTarget() = default;

  // Starts GET `path`, to end within `deadline`; `done` runs exactly once,
  // on any thread (possibly the calling one).
  virtual void StartRead(const std::string& path, absl::Duration deadline,
                         Done done) = 0;
};

// "" for 200 with the workload's body; "http_<status>" or kWrongBody.
std::string HttpAnswerError(int status, absl::string_view body);

struct SteadyReadOptions {
  double rate = 2;  // reads per second
  absl::Duration duration = absl::Seconds(30);
  absl::Duration deadline = absl::Seconds(3);  // per read
};

// floor(rate * duration) reads; returns once each has ended, the records
// in scheduled order.
std::vector<ReadRecord> RunSteadyReads(ReadTarget& target,
                                       const SteadyReadOptions& options,
                                       Progress& progress);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_STEADY_READS_H_
