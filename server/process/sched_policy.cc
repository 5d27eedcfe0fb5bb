#include "server/process/sched_policy.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace tailgate::server {

absl::StatusOr<SchedPolicy> ParseSchedPolicy(absl::string_view text) {
  if (text == "normal") return SchedPolicy::kNormal;
  if (text == "batch") return SchedPolicy::kBatch;
  return absl::InvalidArgumentError(
      absl::StrCat("must be batch or normal, got \"", text, "\""));
}

absl::string_view SchedPolicyName(SchedPolicy policy) {
  return policy == SchedPolicy::kBatch ? "batch" : "normal";
}

absl::Status SetThisThreadPolicy(SchedPolicy policy) {
  sched_param param{};
  param.sched_priority = 0;
  const bool batch = policy == SchedPolicy::kBatch;
  // pid 0: the calling thread, not the whole process.
  if (sched_setscheduler(0, batch ? SCHED_BATCH : SCHED_OTHER, &param) != 0) {
    return absl::InternalError(absl::StrCat(
        "sched_setscheduler(", batch ? "SCHED_BATCH" : "SCHED_OTHER",
        "): ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<SchedPolicy> ThisThreadPolicy() {
  const int policy = sched_getscheduler(0);
  if (policy == SCHED_OTHER) return SchedPolicy::kNormal;
  if (policy == SCHED_BATCH) return SchedPolicy::kBatch;
  if (policy < 0) {
    return absl::InternalError(
        absl::StrCat("sched_getscheduler: ", std::strerror(errno)));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "scheduling policy ", policy, " is neither normal nor batch"));
}

}  // namespace tailgate::server
