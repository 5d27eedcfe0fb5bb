// Progress lines on stderr, so that someone running a long experiment sees
// it move; stdout carries nothing but the JSON result lines.
//
//   Note("hedged: starting the sidecar");   -> "experiment: hedged: ..."
//   Progress progress("seed hedged", 2000);
//   for (...) progress.Update(done);        -> at most one line a second
//
// Thread safety: Note is safe from any thread (one write per line). A
// Progress belongs to the thread that updates it.

#ifndef TAILGATE_EXPERIMENT_LOAD_PROGRESS_H_
#define TAILGATE_EXPERIMENT_LOAD_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace tailgate::experiment {

// Writes "experiment: <line>\n" to stderr.
void Note(absl::string_view line);

class Progress {
 public:
  // `what` names the phase; `total` reads are expected.
  Progress(std::string what, int64_t total);

  // "experiment: <what>: <done>/<total> reads", when a second has passed
  // since the phase started or since the previous line; short phases print
  // nothing.
  void Update(int64_t done);

 private:
  const std::string what_;
  const int64_t total_;
  std::chrono::steady_clock::time_point next_line_;
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_PROGRESS_H_
