#include "server/sidecar/liveness.h"

#include "absl/strings/str_cat.h"

namespace tailgate::server {

absl::Status CheckLiveness(const absl::Status& probe, absl::Time last_answer,
                           absl::Time now) {
  if (probe.ok() || now - last_answer <= kServingWindow) {
    return absl::OkStatus();
  }
  return absl::UnavailableError(
      absl::StrCat(probe.message(), "; and no read answered in the last ",
                   absl::FormatDuration(kServingWindow)));
}

}  // namespace tailgate::server
