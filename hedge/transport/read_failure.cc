#include "hedge/transport/read_failure.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/types/optional.h"

namespace tailgate::hedge {
namespace {

// The payload's type URL; its value is the failure's number as one byte.
constexpr absl::string_view kPayloadUrl = "type.tailgate.dev/hedge.ReadFailure";
constexpr int kLastFailure = static_cast<int>(ReadFailure::kUpstreamFailure);

absl::StatusCode CodeOf(ReadFailure failure) {
  switch (failure) {
    case ReadFailure::kUnknownUpstream:
      return absl::StatusCode::kNotFound;
    case ReadFailure::kOverloaded:
    case ReadFailure::kTooLarge:
      return absl::StatusCode::kResourceExhausted;
    case ReadFailure::kDeadlineExceeded:
      return absl::StatusCode::kDeadlineExceeded;
    case ReadFailure::kCancelled:
      return absl::StatusCode::kCancelled;
    case ReadFailure::kNoAddress:
    case ReadFailure::kNoReplica:
    case ReadFailure::kShuttingDown:
    case ReadFailure::kUpstreamFailure:
      break;
  }
  return absl::StatusCode::kUnavailable;
}

}  // namespace

absl::Status ReadFailureStatus(ReadFailure failure, absl::string_view message) {
  absl::Status status(CodeOf(failure), message);
  status.SetPayload(kPayloadUrl,
                    absl::Cord(std::string(1, static_cast<char>(failure))));
  return status;
}

std::optional<ReadFailure> ReadFailureOf(const absl::Status& status) {
  const absl::optional<absl::Cord> payload = status.GetPayload(kPayloadUrl);
  if (!payload.has_value() || payload->size() != 1) return std::nullopt;
  const int value = static_cast<unsigned char>(*payload->char_begin());
  if (value > kLastFailure) return std::nullopt;
  return static_cast<ReadFailure>(value);
}

}  // namespace tailgate::hedge
