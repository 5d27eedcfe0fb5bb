#include "server/observability/library_logs.h"

#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>

#include <string>

#include "absl/time/clock.h"

namespace tailgate::server {
namespace {

// A few lines per window: what a library says once is kept; a client that
// makes one say the same thing a thousand times costs a handful of lines.
constexpr int kBurst = 5;
constexpr absl::Duration kWindow = absl::Seconds(10);

// Process-wide: the libraries' handlers are plain function pointers.
// Created once by RouteLibraryLogs and never destroyed, so that a library
// line logged during exit still finds them.
struct Route {
  Logger log;
  LibraryLogLimiter limiter{kBurst, kWindow};
};
Route* route = nullptr;

void GrpcLog(gpr_log_func_args* args) {
  WriteLibraryLog(route->log, route->limiter, absl::Now(), "grpc",
                  gpr_log_severity_string(args->severity),
                  args->file == nullptr ? "" : args->file, args->line,
                  args->message == nullptr ? "" : args->message);
}

void ProtobufLog(google::protobuf::LogLevel level, const char* file, int line,
                 const std::string& message) {
  static constexpr const char* kNames[] = {"INFO", "WARNING", "ERROR", "FATAL"};
  const int index = static_cast<int>(level);
  WriteLibraryLog(route->log, route->limiter, absl::Now(), "protobuf",
                  index >= 0 && index < 4 ? kNames[index] : "UNKNOWN",
                  file == nullptr ? "" : file, line, message);
}

}  // namespace

LibraryLogLimiter::Verdict LibraryLogLimiter::Admit(absl::Time now) {
  hedge::MutexLock lock(&mu_);
  if (now - window_start_ >= window_) {
    window_start_ = now;
    written_in_window_ = 0;
  }
  Verdict verdict;
  if (written_in_window_ >= burst_) {
    ++suppressed_;
    return verdict;
  }
  ++written_in_window_;
  verdict.write = true;
  verdict.suppressed = suppressed_;
  suppressed_ = 0;
  return verdict;
}

void WriteLibraryLog(const Logger& log, LibraryLogLimiter& limiter,
                     absl::Time now, absl::string_view library,
                     absl::string_view severity, absl::string_view file,
                     int line, absl::string_view message) {
  const LibraryLogLimiter::Verdict verdict = limiter.Admit(now);
  if (!verdict.write) return;
  if (verdict.suppressed > 0) {
    log.Warn("library_log_suppressed", {{"lines", verdict.suppressed}});
  }
  log.Warn("library_log", {{"library", library},
                           {"severity", severity},
                           {"file", file},
                           {"line", line},
                           {"message", message}});
}

void RouteLibraryLogs(const Logger& log) {
  if (route != nullptr) return;
  route = new Route{log};
  gpr_set_log_function(&GrpcLog);
  google::protobuf::SetLogHandler(&ProtobufLog);
}

}  // namespace tailgate::server
