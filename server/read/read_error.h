// ReadError: why a read ended without an answer, whichever door it came
// through, as a type (ReadEnd) with the status the API contract gives it
// (tailgate.proto: the gRPC code) and a message for people. Doors map the
// ReadEnd through one table per protocol (the gRPC code is the status's;
// the HTTP door's table is in http_mapping.h); none reads the message.
//
//   end                code                 raised by
//   kInvalidArgument   INVALID_ARGUMENT     the door or the descriptor check
//   kDraining          UNAVAILABLE          admission: the sidecar drains
//   kTooManyCalls      RESOURCE_EXHAUSTED   admission: --max_requests calls
//                                           running or sending their answer
//   kBufferFull        RESOURCE_EXHAUSTED   admission or delivery: answers
//                                           waiting fill --max_buffered_bytes
//   kUnknownUpstream   NOT_FOUND            the engine (hedge::ReadFailure,
//   kNoAddress         UNAVAILABLE          read_failure.h, has each one)
//   kOverloaded        RESOURCE_EXHAUSTED
//   kNoReplica         UNAVAILABLE
//   kDeadlineExceeded  DEADLINE_EXCEEDED
//   kCancelled         CANCELLED
//   kShuttingDown      UNAVAILABLE          the engine, or a door that stops
//   kTooLarge          RESOURCE_EXHAUSTED
//   kUpstreamFailure   UNAVAILABLE
//   kInternal          INTERNAL             a status without a ReadFailure
//
// Thread safety: values and pure functions.

#ifndef TAILGATE_SERVER_READ_READ_ERROR_H_
#define TAILGATE_SERVER_READ_READ_ERROR_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tailgate::server {

enum class ReadEnd {
  kInvalidArgument,
  kDraining,
  kTooManyCalls,
  kBufferFull,
  kUnknownUpstream,
  kNoAddress,
  kOverloaded,
  kNoReplica,
  kDeadlineExceeded,
  kCancelled,
  kShuttingDown,
  kTooLarge,
  kUpstreamFailure,
  kInternal,
};

struct ReadError {
  ReadEnd end = ReadEnd::kInternal;
  absl::Status status;  // never OK
};

// `end` with the code of the table above and `message`.
ReadError MakeReadError(ReadEnd end, absl::string_view message);

// The error for a status the engine returned (a refusal) or completed a
// read with. REQUIRES: !status.ok().
ReadError ReadErrorFromEngine(const absl::Status& status);

// The error a door answers when it stops with calls open.
ReadError ShuttingDownError();

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_READ_READ_ERROR_H_
