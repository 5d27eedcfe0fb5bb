#include "experiment/measure/open_loop_report.h"

#include "experiment/report/percentiles.h"
#include "experiment/report/report.h"

namespace tailgate::experiment {

void AddOpenLoopFields(const OpenLoopResult& result, JsonObject& line) {
  line.AddInt("sent", result.sent)
      .AddDouble("sent_rps", result.SentRps(), 1)
      .AddInt("ok", result.ok)
      .AddInt("rejected", result.rejected)
      .AddInt("failed", result.failed)
      .AddInt("dropped", result.dropped)
      .AddInt("late_sends", result.late)
      .AddMillis("max_send_lag_ms", result.max_lag);
  AddLatencyFields(Summarize(result.latencies), line);
  AddLatencyFields(Summarize(result.send_latencies), line, "from_send_");
  if (!result.failure_notes.empty()) {
    line.AddString("first_failure", result.failure_notes.front());
  }
}

void AddRejectionFields(const OpenLoopResult& result, JsonObject& line) {
  AddLatencyFields(Summarize(result.rejection_latencies), line, "rejected_");
}

}  // namespace tailgate::experiment
