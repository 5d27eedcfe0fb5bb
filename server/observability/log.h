// Logger: one structured line per lifecycle event (start, listening,
// replica health, drain), never one per request.
//
// Example:
//   Logger log(LogFormat::kLogfmt);
//   log.Info("listening", {{"service", "grpc"}, {"addr", "127.0.0.1:8080"}});
// writes
//   ts=2024-05-01T12:00:00.123456Z level=info event=listening service=grpc
//   addr=127.0.0.1:8080
// (one line). kJson writes the same fields as one JSON object per line.
//
// Thread safety: safe from any thread. Each line goes out in one write(2),
// so lines from different threads never interleave.

#ifndef TAILGATE_SERVER_OBSERVABILITY_LOG_H_
#define TAILGATE_SERVER_OBSERVABILITY_LOG_H_

#include <initializer_list>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tailgate::server {

enum class LogFormat { kLogfmt, kJson };

// One key=value pair. Numbers and strings convert implicitly.
struct LogField {
  LogField(absl::string_view k, const absl::AlphaNum& v)
      : key(k), value(v.Piece()) {}
  // A template, so that ints and pointers do not convert to bool.
  template <typename T,
            typename std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  LogField(absl::string_view k, T v) : key(k), value(v ? "true" : "false") {}
  LogField(absl::string_view k, absl::Duration v)
      : key(k), value(absl::FormatDuration(v)) {}

  absl::string_view key;
  std::string value;
};

class Logger {
 public:
  using WallClock = absl::Time (*)();

  // Writes to `fd` (not owned). `now` stamps each line; injected by tests.
  explicit Logger(LogFormat format, int fd = 2, WallClock now = &absl::Now);

  void Info(absl::string_view event,
            std::initializer_list<LogField> fields) const {
    Write("info", event, fields);
  }
  void Warn(absl::string_view event,
            std::initializer_list<LogField> fields) const {
    Write("warn", event, fields);
  }
  void Error(absl::string_view event,
             std::initializer_list<LogField> fields) const {
    Write("error", event, fields);
  }

  // The line Write would emit, without the trailing newline.
  std::string Format(absl::string_view level, absl::string_view event,
                     std::initializer_list<LogField> fields) const;

 private:
  void Write(absl::string_view level, absl::string_view event,
             std::initializer_list<LogField> fields) const;

  // Constant after construction.
  const LogFormat format_;
  const int fd_;
  const WallClock now_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_OBSERVABILITY_LOG_H_
