#include "server/read_admission.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "server/read_descriptor.h"

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

}  // namespace tailgate::server
