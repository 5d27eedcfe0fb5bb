#include "experiment/measure/peak_rss.h"

#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tailgate::experiment {

// A line reads "VmHWM:     28196 kB" or "Threads:\t16".
absl::StatusOr<int64_t> ProcStatusNumber(pid_t pid, absl::string_view field) {
  const std::string path = absl::StrCat("/proc/", pid, "/status");
  const std::string prefix = absl::StrCat(field, ":");
  std::ifstream status(path);
  for (std::string line; std::getline(status, line);) {
    absl::string_view value = line;
    if (!absl::ConsumePrefix(&value, prefix)) continue;
    value = absl::StripSuffix(absl::StripAsciiWhitespace(value), "kB");
    int64_t kib = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(value), &kib)) return kib;
  }
  return absl::UnavailableError(absl::StrCat("no ", field, " in ", path));
}

absl::StatusOr<int64_t> PeakRssKib(pid_t pid) {
  return ProcStatusNumber(pid, "VmHWM");
}

absl::StatusOr<int64_t> ResidentKib(pid_t pid) {
  return ProcStatusNumber(pid, "VmRSS");
}

}  // namespace tailgate::experiment
