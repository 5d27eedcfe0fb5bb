#include "experiment/measure/thread_cpu.h"

#include <dirent.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/process/child_process.h"

namespace tailgate::experiment {
namespace {

// "name: value" of a /proc status file; 0 when absent.
int64_t StatusField(const std::string& status, absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(status, '\n')) {
    if (!absl::ConsumePrefix(&line, name) || !absl::ConsumePrefix(&line, ":")) {
      continue;
    }
    int64_t value = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &value)) {
      return value;
    }
  }
  return 0;
}

}  // namespace

std::string ThreadGroupName(const std::string& comm) {
  std::string name = comm;
  while (!name.empty() && (absl::ascii_isdigit(name.back()) ||
                           name.back() == '-' || name.back() == '_')) {
    name.pop_back();
  }
  return name.empty() ? comm : name;
}

absl::StatusOr<ThreadCpu> ReadThreadCpu(pid_t pid) {
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot list ", tasks));
  }
  static const long ticks_per_second = sysconf(_SC_CLK_TCK);
  ThreadCpu cpu;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string task = absl::StrCat(tasks, "/", entry->d_name);
    const std::string stat = testing::ReadWholeFile(task + "/stat");
    const size_t open = stat.find('(');
    const size_t close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    // After ") ": state is field 3, so utime (14) is index 11.
    std::vector<absl::string_view> fields =
        absl::StrSplit(absl::string_view(stat).substr(close + 2), ' ');
    int64_t utime = 0, stime = 0;
    if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
        !absl::SimpleAtoi(fields[12], &stime)) {
      continue;  // ended while being read
    }
    const std::string status = testing::ReadWholeFile(task + "/status");
    ThreadGroupCpu& group =
        cpu[ThreadGroupName(stat.substr(open + 1, close - open - 1))];
    group.user += absl::Seconds(utime) / ticks_per_second;
    group.system += absl::Seconds(stime) / ticks_per_second;
    group.voluntary_switches += StatusField(status, "voluntary_ctxt_switches");
    group.involuntary_switches +=
        StatusField(status, "nonvoluntary_ctxt_switches");
  }
  closedir(dir);
  return cpu;
}

ThreadCpu ThreadCpuDelta(const ThreadCpu& before, const ThreadCpu& after) {
  ThreadCpu delta;
  for (const auto& [name, now] : after) {
    ThreadGroupCpu d = now;
    if (auto it = before.find(name); it != before.end()) {
      d.user -= it->second.user;
      d.system -= it->second.system;
      d.voluntary_switches -= it->second.voluntary_switches;
      d.involuntary_switches -= it->second.involuntary_switches;
    }
    delta[name] = d;
  }
  return delta;
}

ThreadGroupCpu TotalCpu(const ThreadCpu& cpu) {
  ThreadGroupCpu total;
  for (const auto& [name, group] : cpu) {
    total.user += group.user;
    total.system += group.system;
    total.voluntary_switches += group.voluntary_switches;
    total.involuntary_switches += group.involuntary_switches;
  }
  return total;
}

}  // namespace tailgate::experiment
