// The process's descriptor limit (RLIMIT_NOFILE). Every client connection,
// replica connection and listener is a descriptor; a sidecar that runs out
// cannot accept or connect. Linux's default soft limit (1024) is far below
// the usual hard limit, so main raises the soft limit to the hard one at
// start and logs both.
//
// Thread safety: call from main before starting threads.
#ifndef TAILGATE_SERVER_PROCESS_FILE_LIMIT_H_
#define TAILGATE_SERVER_PROCESS_FILE_LIMIT_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace tailgate::server {

struct FileLimit {
  uint64_t before = 0;  // the soft limit found
  uint64_t soft = 0;    // the soft limit now
  uint64_t hard = 0;
};

// Raises the soft RLIMIT_NOFILE to the hard limit (to fs.nr_open when the
// hard limit is unlimited). An error names what failed; the limit is then
// unchanged.
absl::StatusOr<FileLimit> RaiseFileLimit();

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_PROCESS_FILE_LIMIT_H_
