// RunOpenLoop: an open-loop load generator. Read i (GET /read?id=i, the
// straggler mix) is scheduled at t0 + i / rate and sent then, whether or
// not earlier reads have answered: a slow answer does not delay the next
// send, and each read's latency is measured from its *scheduled* time, so
// a generator that falls behind shows up as latency instead of being
// hidden (no coordinated omission).
//
// Sends are asynchronous (Client::ReadAsync, gRPC's callback API); answers
// are recorded on gRPC's threads. Rejected reads (RESOURCE_EXHAUSTED: the
// sidecar never queues) are timed from their actual send, which says how
// fast a refusal comes back; failed reads are counted, and the first few
// described. A read that would exceed `max_outstanding` unanswered reads
// is not sent and is counted as dropped, and a send that leaves more than
// `late_after` behind its schedule is counted as late: both are the
// generator's own limits, reported so that they are never mistaken for
// the sidecar's.
//
// Thread safety: blocks the calling thread, which does the scheduling.

#ifndef TAILGATE_EXPERIMENT_LOAD_OPEN_LOOP_H_
#define TAILGATE_EXPERIMENT_LOAD_OPEN_LOOP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "experiment/config/workload.h"
#include "experiment/load/progress.h"

namespace tailgate::experiment {

struct OpenLoopOptions {
  double rate = 1000;  // scheduled reads per second
  absl::Duration duration = absl::Seconds(5);
  absl::Duration deadline = absl::Seconds(2);  // per read
  int64_t max_outstanding = 20000;
  absl::Duration late_after = absl::Milliseconds(1);
  // What read i asks for, and for which tenant ("" for none).
  std::string (*path)(uint64_t i) = ReadPath;
  std::string tenant;
};

// How many failure descriptions an OpenLoopResult keeps.
inline constexpr size_t kFailureNotes = 5;

// `count` per second of `window`; 0 for an empty window.
inline double PerSecond(int64_t count, absl::Duration window) {
  const double seconds = absl::ToDoubleSeconds(window);
  return seconds > 0 ? static_cast<double>(count) / seconds : 0;
}

struct OpenLoopResult {
  int64_t scheduled = 0;
  int64_t sent = 0;
  int64_t ok = 0;
  int64_t rejected = 0;
  int64_t failed = 0;
  int64_t wrong_answers = 0;  // see read_outcome.h; not in `failed`
  int64_t dropped = 0;        // not sent: max_outstanding reached
  int64_t late = 0;           // sent more than late_after behind schedule
  absl::Duration max_lag;     // the furthest any send was behind schedule
  // Of the ok reads, from scheduled send to answer, ascending.
  std::vector<absl::Duration> latencies;
  // Of the ok reads, from actual send to answer, ascending: without the
  // generator's own lateness.
  std::vector<absl::Duration> send_latencies;
  // Of the rejected reads, from actual send to answer, ascending.
  std::vector<absl::Duration> rejection_latencies;
  // Of the failed and the rejected reads, when each answer came, from the
  // first scheduled send, ascending.
  std::vector<absl::Duration> failure_times;
  // The first kFailureNotes failed reads, and the first wrong answer.
  std::vector<std::string> failure_notes;
  std::optional<std::string> first_wrong_answer;
  // From the first scheduled send to the last answer / the last send.
  absl::Duration elapsed;
  absl::Duration send_elapsed;

  // ok reads per second of `elapsed`.
  double AchievedRps() const { return PerSecond(ok, elapsed); }
  // Sends per second of `send_elapsed`: below the offered rate when the
  // generator fell behind.
  double SentRps() const { return PerSecond(sent, send_elapsed); }
};

// Returns once every sent read has been answered (each has a deadline).
// Wrong answers are counted, not fatal here: see WrongAnswerError.
OpenLoopResult RunOpenLoop(Client& client, const OpenLoopOptions& options,
                           Progress& progress);

// An error naming the first wrong answer, if there was one: a wrong body
// is a correctness bug, never a sample.
absl::Status WrongAnswerError(const OpenLoopResult& result);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_OPEN_LOOP_H_
