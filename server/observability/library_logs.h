// The gRPC and protobuf libraries' own log lines, through the sidecar's
// logger: one escaped line each (event=library_log, with the library, its
// severity, source file and line, and the message), so that nothing a client
// sends (a grpc-timeout with a newline in it, a path that is not UTF-8) can
// start a line of its own or flood the log.
//
// LibraryLogLimiter lets through at most `burst` lines per `window`; the
// lines it holds back are counted and reported in one
// event=library_log_suppressed line when the next window lets a line
// through.
//
// Thread safety: the libraries log from any thread; RouteLibraryLogs'
// handlers and LibraryLogLimiter are safe from any thread.
#ifndef TAILGATE_SERVER_OBSERVABILITY_LIBRARY_LOGS_H_
#define TAILGATE_SERVER_OBSERVABILITY_LIBRARY_LOGS_H_

#include <cstdint>

#include "absl/time/time.h"
#include "hedge/sync/mutex.h"
#include "server/observability/log.h"

namespace tailgate::server {

class LibraryLogLimiter {
 public:
  LibraryLogLimiter(int burst, absl::Duration window)
      : burst_(burst), window_(window) {}

  struct Verdict {
    bool write = false;       // write this line
    uint64_t suppressed = 0;  // lines held back since the last one written
  };
  Verdict Admit(absl::Time now);

 private:
  const int burst_;
  const absl::Duration window_;
  hedge::Mutex mu_;
  absl::Time window_start_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int written_in_window_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t suppressed_ ABSL_GUARDED_BY(mu_) = 0;
};

// Writes one library line through `log`, if `limiter` lets it through.
// `library` is "grpc" or "protobuf"; `severity` its own level name.
void WriteLibraryLog(const Logger& log, LibraryLogLimiter& limiter,
                     absl::Time now, absl::string_view library,
                     absl::string_view severity, absl::string_view file,
                     int line, absl::string_view message);

// Installs process-wide handlers for gpr_log and protobuf's log, writing
// through a copy of `log` at most 20 lines per 10 s. Call once, early in
// main; the handlers stay for the life of the process.
void RouteLibraryLogs(const Logger& log);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_OBSERVABILITY_LIBRARY_LOGS_H_
