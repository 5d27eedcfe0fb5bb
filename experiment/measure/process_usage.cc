#include "experiment/measure/process_usage.h"

#include <unistd.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "experiment/measure/peak_rss.h"
#include "tests/process/child_process.h"

namespace tailgate::experiment {
namespace {

// utime + stime: fields 14 and 15 of /proc/PID/stat, counted after the
// command name, which is in parentheses and may contain spaces.
absl::StatusOr<absl::Duration> CpuTime(pid_t pid) {
  const std::string path = absl::StrCat("/proc/", pid, "/stat");
  const std::string stat = testing::ReadWholeFile(path);
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) {
    return absl::UnavailableError(absl::StrCat("cannot read ", path));
  }
  // After ") ": state is field 3, so utime (14) is index 11.
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(stat).substr(close + 2), ' ');
  int64_t utime = 0, stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return absl::DataLossError(absl::StrCat("unexpected ", path));
  }
  static const long ticks_per_second = sysconf(_SC_CLK_TCK);
  return absl::Seconds(utime + stime) / ticks_per_second;
}

}  // namespace

absl::StatusOr<ProcessUsage> ReadProcessUsage(pid_t pid) {
  ProcessUsage usage;
  absl::StatusOr<absl::Duration> cpu = CpuTime(pid);
  if (!cpu.ok()) return cpu.status();
  usage.cpu = *cpu;
  for (const auto& [field, out] :
       {std::pair<const char*, int64_t*>{"VmRSS", &usage.rss_kib},
        {"RssAnon", &usage.rss_anon_kib},
        {"RssFile", &usage.rss_file_kib},
        {"Threads", &usage.threads}}) {
    absl::StatusOr<int64_t> value = ProcStatusNumber(pid, field);
    if (!value.ok()) return value.status();
    *out = *value;
  }
  return usage;
}

}  // namespace tailgate::experiment
