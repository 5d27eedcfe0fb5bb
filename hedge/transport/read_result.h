// What a finished read hands its caller: the winning attempt's response
// with its trace, or the status for a ReadError (the codes engine.h lists).
//
// Thread safety: loop thread only (they read and consume attempt state).

#ifndef TAILGATE_HEDGE_TRANSPORT_READ_RESULT_H_
#define TAILGATE_HEDGE_TRANSPORT_READ_RESULT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hedge/decision/read_decision.h"
#include "hedge/transport/engine.h"
#include "hedge/transport/read_state.h"

namespace tailgate::hedge::transport {

// The response of `read`'s attempt `winner`, taken out of its slot, with
// hop-by-hop headers removed and the read's trace as of `now`. The trace's
// hedge_won is set only for an extra attempt's good answer (kSuccess).
EngineResponse TakeResponse(Read& read, int winner, absl::Time now);

// What the caller is told when a read ends with `error`. Messages name the
// limit at fault, never a replica or transport error text.
struct ErrorContext {
  int64_t max_attempts = 0;
  int64_t max_response_bytes = 0;
  absl::Duration timeout;  // the engine's cap on every deadline
  // Whose deadline a kDeadlineExceeded read had: the message says which.
  DeadlineSource deadline_source = DeadlineSource::kSidecarTimeout;
  bool stopping = false;  // the engine is shutting down
};
absl::Status ReadErrorStatus(ReadError error, const ErrorContext& context);

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_READ_RESULT_H_
