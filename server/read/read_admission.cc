#include "server/read/read_admission.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/read/read_descriptor.h"

namespace tailgate::server {

absl::StatusOr<hedge::EngineRead> ReadAdmission::Admit(
    const v1::ReadRequest& request, absl::Time call_deadline) {
  absl::StatusOr<hedge::EngineRead> read =
      EngineReadFromRequest(request, timeout_);
  if (!read.ok()) {
    rejections_.Add(RejectReason::kInvalidArgument);
    return read.status();
  }
  if (!gate_.TryEnter()) {
    rejections_.Add(RejectReason::kDraining);
    return absl::UnavailableError("server is draining");
  }
  switch (memory_.TryAdmit()) {
    case ResponseMemory::Admission::kAdmitted:
      break;
    case ResponseMemory::Admission::kTooManyCalls:
      gate_.Exit();
      rejections_.Add(RejectReason::kTooManyCalls);
      return absl::ResourceExhaustedError(
          "too many reads in flight (max_requests)");
    case ResponseMemory::Admission::kBufferFull:
      gate_.Exit();
      rejections_.Add(RejectReason::kBufferFull);
      return BufferFullError();
  }
  read->deadline =
      EngineDeadline(call_deadline, absl::Now(), engine_.clock().Now());
  return read;
}

absl::StatusOr<uint64_t> ReadAdmission::Submit(hedge::EngineRead read,
                                               hedge::ReadCallback done) {
  absl::StatusOr<uint64_t> id =
      engine_.Submit(std::move(read), std::move(done));
  if (!id.ok() && id.status().code() == absl::StatusCode::kNotFound) {
    rejections_.Add(RejectReason::kUnknownUpstream);
  }
  return id;
}

bool ReadAdmission::HoldAnswer(int64_t bytes) {
  if (memory_.TryHold(bytes)) return true;
  rejections_.AddDropped(DropReason::kBufferFull);
  return false;
}

absl::Status ReadAdmission::BufferFullError() const {
  return absl::ResourceExhaustedError(
      absl::StrCat("answers waiting to be sent are at the sidecar's "
                   "max_buffered_bytes (",
                   memory_.max_bytes(), ")"));
}

int64_t AnswerBytes(const hedge::EngineResponse& response) {
  int64_t bytes = static_cast<int64_t>(response.body.size()) + 64;
  for (const auto& header : response.headers) {
    bytes += static_cast<int64_t>(header.name.size() + header.value.size()) + 8;
  }
  return bytes;
}

}  // namespace tailgate::server
