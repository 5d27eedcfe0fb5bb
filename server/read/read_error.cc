#include "server/read/read_error.h"

#include <optional>

#include "hedge/transport/read_failure.h"

namespace tailgate::server {
namespace {

absl::StatusCode CodeOf(ReadEnd end) {
  switch (end) {
    case ReadEnd::kInvalidArgument:
      return absl::StatusCode::kInvalidArgument;
    case ReadEnd::kUnknownUpstream:
      return absl::StatusCode::kNotFound;
    case ReadEnd::kTooManyCalls:
    case ReadEnd::kBufferFull:
    case ReadEnd::kOverloaded:
    case ReadEnd::kTooLarge:
      return absl::StatusCode::kResourceExhausted;
    case ReadEnd::kDeadlineExceeded:
      return absl::StatusCode::kDeadlineExceeded;
    case ReadEnd::kCancelled:
      return absl::StatusCode::kCancelled;
    case ReadEnd::kDraining:
    case ReadEnd::kNoAddress:
    case ReadEnd::kNoReplica:
    case ReadEnd::kShuttingDown:
    case ReadEnd::kUpstreamFailure:
      return absl::StatusCode::kUnavailable;
    case ReadEnd::kInternal:
      break;
  }
  return absl::StatusCode::kInternal;
}

ReadEnd EndOf(hedge::ReadFailure failure) {
  switch (failure) {
    case hedge::ReadFailure::kUnknownUpstream:
      return ReadEnd::kUnknownUpstream;
    case hedge::ReadFailure::kNoAddress:
      return ReadEnd::kNoAddress;
    case hedge::ReadFailure::kOverloaded:
      return ReadEnd::kOverloaded;
    case hedge::ReadFailure::kNoReplica:
      return ReadEnd::kNoReplica;
    case hedge::ReadFailure::kDeadlineExceeded:
      return ReadEnd::kDeadlineExceeded;
    case hedge::ReadFailure::kCancelled:
      return ReadEnd::kCancelled;
    case hedge::ReadFailure::kShuttingDown:
      return ReadEnd::kShuttingDown;
    case hedge::ReadFailure::kTooLarge:
      return ReadEnd::kTooLarge;
    case hedge::ReadFailure::kUpstreamFailure:
      return ReadEnd::kUpstreamFailure;
  }
  return ReadEnd::kInternal;
}

}  // namespace

ReadError MakeReadError(ReadEnd end, absl::string_view message) {
  return {end, absl::Status(CodeOf(end), message)};
}

ReadError ReadErrorFromEngine(const absl::Status& status) {
  const std::optional<hedge::ReadFailure> failure =
      hedge::ReadFailureOf(status);
  if (!failure.has_value()) {
    // A promise broken somewhere: said as INTERNAL, never as the code it
    // happened to carry, so that no door maps it as something it is not.
    return MakeReadError(ReadEnd::kInternal, status.message());
  }
  return {EndOf(*failure), status};
}

ReadError ShuttingDownError() {
  return MakeReadError(ReadEnd::kShuttingDown, hedge::kShuttingDownMessage);
}

}  // namespace tailgate::server
