#include "server/observability/log.h"

#include <errno.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/ascii.h"

namespace tailgate::server {
namespace {

bool NeedsLogfmtQuotes(absl::string_view value) {
  if (value.empty()) return true;
  for (char c : value) {
    if (c == ' ' || c == '=' || c == '"' || c == '\\' ||
        absl::ascii_iscntrl(static_cast<unsigned char>(c))) {
      return true;
    }
  }
  return false;
}

// Escapes for a double-quoted string; shared by logfmt and JSON, which
// agree on \" \\ \n \r \t and \u00XX for other control characters.
void AppendQuoted(std::string& out, absl::string_view value) {
  out.push_back('"');
  for (char c : value) {
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        if (absl::ascii_iscntrl(static_cast<unsigned char>(c))) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x",
                        static_cast<unsigned char>(c));
          out.append(buf);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

void AppendLogfmt(std::string& out, absl::string_view key,
                  absl::string_view value) {
  if (!out.empty()) out.push_back(' ');
  absl::StrAppend(&out, key, "=");
  if (NeedsLogfmtQuotes(value)) {
    AppendQuoted(out, value);
  } else {
    out.append(value.data(), value.size());
  }
}

void AppendJson(std::string& out, absl::string_view key,
                absl::string_view value) {
  out.push_back(out.empty() ? '{' : ',');
  AppendQuoted(out, key);
  out.push_back(':');
  AppendQuoted(out, value);
}

}  // namespace

Logger::Logger(LogFormat format, int fd, WallClock now)
    : format_(format), fd_(fd), now_(now) {}

std::string Logger::Format(absl::string_view level, absl::string_view event,
                           std::initializer_list<LogField> fields) const {
  auto append = format_ == LogFormat::kJson ? &AppendJson : &AppendLogfmt;
  std::string line;
  append(line, "ts",
         absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", now_(), absl::UTCTimeZone()));
  append(line, "level", level);
  append(line, "event", event);
  for (const LogField& field : fields) append(line, field.key, field.value);
  if (format_ == LogFormat::kJson) line.push_back('}');
  return line;
}

void Logger::Write(absl::string_view level, absl::string_view event,
                   std::initializer_list<LogField> fields) const {
  std::string line = Format(level, event, fields);
  line.push_back('\n');
  // One write(2) per line keeps concurrent lines whole; the loop only
  // finishes a short write, which a pipe or file does not produce for lines
  // this short.
  absl::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd_, rest.data(), rest.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // Nowhere left to report a failing log.
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace tailgate::server
