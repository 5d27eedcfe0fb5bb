#include "experiment/load/read_outcome.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "experiment/config/workload.h"

namespace tailgate::experiment {

ReadOutcome Classify(const absl::StatusOr<ReadResponse>& result) {
  if (!result.ok()) {
    return absl::IsResourceExhausted(result.status()) ? ReadOutcome::kRejected
                                                      : ReadOutcome::kFailed;
  }
  if (result->status != 200) return ReadOutcome::kFailed;
  return result->body == kReplicaBody ? ReadOutcome::kOk
                                      : ReadOutcome::kWrongAnswer;
}

std::string DescribeFailure(absl::string_view path,
                            const absl::StatusOr<ReadResponse>& result) {
  if (!result.ok()) {
    return absl::StrCat("read ", path, ": ", result.status().ToString());
  }
  if (result->status != 200) {
    return absl::StrCat("read ", path, ": HTTP status ", result->status);
  }
  return absl::StrCat("read ", path, ": body \"",
                      absl::CHexEscape(result->body.substr(0, 64)),
                      "\" is not \"", kReplicaBody, "\"");
}

}  // namespace tailgate::experiment
