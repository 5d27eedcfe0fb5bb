#include "experiment/peak_rss.h"

#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tailgate::experiment {

absl::StatusOr<int64_t> PeakRssKib(pid_t pid) {
  const std::string path = absl::StrCat("/proc/", pid, "/status");
  std::ifstream status(path);
  // The line reads "VmHWM:     28196 kB".
  for (std::string line; std::getline(status, line);) {
    absl::string_view value = line;
    if (!absl::ConsumePrefix(&value, "VmHWM:")) continue;
    value = absl::StripSuffix(absl::StripAsciiWhitespace(value), "kB");
    int64_t kib = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(value), &kib)) return kib;
  }
  return absl::UnavailableError(absl::StrCat("no VmHWM in ", path));
}

}  // namespace tailgate::experiment
