// The JSON fields of an open-loop run (open_loop.h) that the open_loop,
// chaos and overload scenarios all print.
//
// Thread safety: pure functions.

#ifndef TAILGATE_EXPERIMENT_MEASURE_OPEN_LOOP_REPORT_H_
#define TAILGATE_EXPERIMENT_MEASURE_OPEN_LOOP_REPORT_H_

#include "experiment/load/open_loop.h"
#include "experiment/report/json_line.h"

namespace tailgate::experiment {

// sent, sent_rps, ok, rejected, failed, dropped, late_sends,
// max_send_lag_ms, then the latency fields of the ok reads (report.h's
// AddLatencyFields) from their scheduled send, then the same from their
// actual send, prefixed "from_send_"; first_failure when a read failed.
void AddOpenLoopFields(const OpenLoopResult& result, JsonObject& line);

// How fast refusals came back, from their actual send: the latency fields
// of the rejected reads, prefixed "rejected_" (rejected_p50_ms, ...,
// rejected_samples).
void AddRejectionFields(const OpenLoopResult& result, JsonObject& line);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_MEASURE_OPEN_LOOP_REPORT_H_
