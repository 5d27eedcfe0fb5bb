// ReadFailure: why the engine refused a read or completed it without an
// answer, as a type. Every non-OK status Engine::Submit returns or a read
// completes with carries one (a status payload); callers map the failure,
// never the message, which is for people.
//
//   failure            code                 when
//   kUnknownUpstream   NOT_FOUND            refusal: no such replica set
//   kNoAddress         UNAVAILABLE          refusal: the set's names
//                                           resolved to no address yet
//   kOverloaded        RESOURCE_EXHAUSTED   refusal: max_requests (the
//                                           engine's or the set's) or the
//                                           tenant's share; completion: no
//                                           attempt permit for the primary
//   kNoReplica         UNAVAILABLE          no eligible replica
//   kDeadlineExceeded  DEADLINE_EXCEEDED    the read's deadline passed
//   kCancelled         CANCELLED            Engine::Cancel
//   kShuttingDown      UNAVAILABLE          the engine is stopping
//   kTooLarge          RESOURCE_EXHAUSTED   the answer passed
//                                           max_response_bytes
//   kUpstreamFailure   UNAVAILABLE          every attempt failed at the
//                                           transport level
//
// Thread safety: pure functions.

#ifndef TAILGATE_HEDGE_TRANSPORT_READ_FAILURE_H_
#define TAILGATE_HEDGE_TRANSPORT_READ_FAILURE_H_

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tailgate::hedge {

enum class ReadFailure {
  kUnknownUpstream,
  kNoAddress,
  kOverloaded,
  kNoReplica,
  kDeadlineExceeded,
  kCancelled,
  kShuttingDown,
  kTooLarge,
  kUpstreamFailure,
};

// The message every kShuttingDown status carries.
inline constexpr absl::string_view kShuttingDownMessage =
    "tailgate is shutting down";

// A status with `failure`'s code (table above), `message` and the failure
// attached.
absl::Status ReadFailureStatus(ReadFailure failure, absl::string_view message);

// The failure `status` carries; nullopt for OK or a status made elsewhere.
std::optional<ReadFailure> ReadFailureOf(const absl::Status& status);

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_TRANSPORT_READ_FAILURE_H_
