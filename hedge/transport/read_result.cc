#include "hedge/transport/read_result.h"

#include "absl/strings/str_cat.h"
#include "hedge/hygiene/http_hygiene.h"

namespace tailgate::hedge::transport {

EngineResponse TakeResponse(Read& read, int winner, absl::Time now) {
  HttpAttempt& http = read.slots[winner]->http;
  EngineResponse response;
  response.status = http.status();
  response.headers = hygiene::SanitizeResponseHeaders(http.TakeHeaders());
  response.body = http.TakeBody();
  ReadTrace& trace = response.trace;
  trace.attempts = read.decision.attempts_launched();
  trace.hedged = trace.attempts > 1;
  // A win is an extra attempt's good answer, not a forwarded failure
  // answer (5xx, 429).
  trace.hedge_won = read.decision.kind(winner) != AttemptKind::kPrimary &&
                    !IsFailureAnswer(response.status);
  trace.replica =
      hygiene::ReplicaLabel(read.upstream.replica(read.replica(winner)));
  trace.latency = now - read.admitted;
  return response;
}

absl::Status ReadErrorStatus(ReadError error, const ErrorContext& context) {
  switch (error) {
    case ReadError::kOverloaded:
      return ReadFailureStatus(
          ReadFailure::kOverloaded,
          absl::StrCat("too many concurrent upstream attempts (max_attempts=",
                       context.max_attempts, ")"));
    case ReadError::kNoReplica:
      return ReadFailureStatus(ReadFailure::kNoReplica,
                               "no replica available: every circuit is open");
    case ReadError::kDeadlineExceeded:
      if (context.deadline_source == DeadlineSource::kCaller) {
        return ReadFailureStatus(
            ReadFailure::kDeadlineExceeded,
            "the caller's deadline passed before a replica answered");
      }
      return ReadFailureStatus(
          ReadFailure::kDeadlineExceeded,
          absl::StrCat("the sidecar's timeout (",
                       absl::FormatDuration(context.timeout),
                       ") passed before a replica answered"));
    case ReadError::kCancelled:
      if (context.stopping) {
        return ReadFailureStatus(ReadFailure::kShuttingDown,
                                 kShuttingDownMessage);
      }
      return ReadFailureStatus(ReadFailure::kCancelled,
                               "read cancelled by the caller");
    case ReadError::kTooLarge:
      return ReadFailureStatus(
          ReadFailure::kTooLarge,
          absl::StrCat("response exceeds max_response_bytes (",
                       context.max_response_bytes, ")"));
    case ReadError::kUpstreamFailure:
      return ReadFailureStatus(ReadFailure::kUpstreamFailure,
                               "every attempt failed to reach a replica");
  }
  return absl::InternalError("unknown read error");
}

}  // namespace tailgate::hedge::transport
