#include "server/process/file_limit.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tailgate::server {
namespace {

// The kernel's ceiling for RLIMIT_NOFILE; 1048576 when it cannot be read.
uint64_t NrOpen() {
  std::ifstream in("/proc/sys/fs/nr_open");
  uint64_t value = 0;
  if (in >> value && value > 0) return value;
  return uint64_t{1} << 20;
}

}  // namespace

absl::StatusOr<FileLimit> RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::InternalError(
        absl::StrCat("getrlimit(RLIMIT_NOFILE): ", strerror(errno)));
  }
  FileLimit result;
  result.before = limit.rlim_cur;
  const rlim_t target =
      limit.rlim_max == RLIM_INFINITY ? NrOpen() : limit.rlim_max;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < target) {
    rlimit raised = limit;
    raised.rlim_cur = target;
    if (setrlimit(RLIMIT_NOFILE, &raised) != 0) {
      return absl::InternalError(absl::StrCat(
          "setrlimit(RLIMIT_NOFILE, ", target, "): ", strerror(errno)));
    }
    limit = raised;
  }
  result.soft = limit.rlim_cur;
  result.hard = limit.rlim_max;
  return result;
}

}  // namespace tailgate::server
