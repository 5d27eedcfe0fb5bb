// The sick scenario's figures for one (case, target): its reads and the
// target's counters, sampled every second, summed up over the case and
// second by second (SummarizeSickCase), and written as the fields of its
// JSON line (AddSickCaseFields).
//
// Seconds count from the reader's first scheduled send; the counter
// sampler starts back to back with it (after its first scrape), so the two
// clocks agree to within a few milliseconds. A read belongs to the second it
// was scheduled in. A change of a counter between two samples counts in the
// second in which the earlier sample was taken; what the target did after the
// last second (the last reads' answers) counts in the last second.
//
// Thread safety: pure functions.

#ifndef TAILGATE_EXPERIMENT_REPORT_SICK_TIMELINE_H_
#define TAILGATE_EXPERIMENT_REPORT_SICK_TIMELINE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "experiment/load/steady_reads.h"
#include "experiment/report/json_line.h"
#include "experiment/report/percentiles.h"
#include "experiment/report/periodic_sampler.h"

namespace tailgate::experiment {

// A target's totals since it started.
struct TargetCounters {
  // Per replica, in --backends order: tailgate's primary attempts; the
  // requests each replica received, for the gateway.
  std::vector<double> primaries;
  double attempts = 0;  // upstream attempts of every kind
  double requests = 0;  // reads the target admitted
};

using CounterSample = TimedSample<TargetCounters>;

// What the figures are measured against.
struct SickCaseShape {
  int seconds = 30;  // of scheduled reads; per_second has this many entries
  int replicas = 2;  // the last one is the sick one
  absl::Duration deadline = absl::Seconds(3);
  // When the sick replica heals, from the first send; none if it never does.
  std::optional<absl::Duration> heal_at;
};

struct SecondFigures {
  int64_t reads = 0;                  // scheduled in this second
  int64_t failed = 0;                 // of those
  std::optional<absl::Duration> p99;  // of those (failed = deadline)
  // Each replica's part of the primaries in this second; empty when there
  // was none.
  std::vector<double> primary_shares;
  double attempts = 0;
};

struct SickCaseFigures {
  int64_t reads = 0;
  int64_t failed = 0;
  std::map<std::string, int64_t> errors;  // failed reads by label
  // Of every read, a failed one counted as the full deadline: the reader
  // had no good answer within it.
  LatencySummary latency;
  double attempts_per_read = 0;  // NaN when nothing was admitted
  // From the sample at seconds - 10 (the first, for a shorter case) to the
  // last: once a breaker or a detector has had time to act.
  double attempts_per_read_last10s = 0;
  // With heal_at: whole seconds from the heal to the start of the first
  // second in which the healed replica had at least 1/(2N) of the
  // primaries; none if no second did.
  std::optional<int64_t> first_fast_primary_s;
  std::vector<SecondFigures> per_second;
};

// REQUIRES: samples ascending by time, at least two, each with
// shape.replicas primaries; shape.seconds >= 1.
SickCaseFigures SummarizeSickCase(const std::vector<ReadRecord>& reads,
                                  const std::vector<CounterSample>& samples,
                                  const SickCaseShape& shape);

// "reads","failed","errors":{label:count},"p50_ms","p99_ms","max_ms",
// "attempts_per_read","attempts_per_read_last10s","first_fast_primary_s"
// (null unless the sick replica healed and got its share),
// "per_second":[{"t","reads","failed","p99_ms","primaries":[...],
// "attempts"}].
void AddSickCaseFields(const SickCaseFigures& figures, JsonObject& line);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_REPORT_SICK_TIMELINE_H_
