#include "server/cpu_set.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tailgate::server {
namespace {

absl::StatusOr<int> ParseCpu(absl::string_view item, absl::string_view text) {
  int cpu = 0;
  // Digits only: SimpleAtoi alone would also take a sign and spaces.
  if (item.empty() ||
      !std::all_of(item.begin(), item.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(item, &cpu)) {
    return absl::InvalidArgumentError(
        absl::StrCat("want CPU numbers and ranges such as 0-1,3; \"", item,
                     "\" in \"", text, "\" is not a CPU number"));
  }
  if (cpu >= MaxCpus()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CPU ", cpu, " in \"", text, "\" is not below ", MaxCpus()));
  }
  return cpu;
}

}  // namespace

int MaxCpus() { return CPU_SETSIZE; }

absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text) {
  if (text.empty()) {
    return absl::InvalidArgumentError(
        "want CPU numbers and ranges such as 0-1,3, got an empty list");
  }
  std::set<int> cpus;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    const size_t dash = item.find('-', 1);
    absl::StatusOr<int> first = ParseCpu(item.substr(0, dash), text);
    if (!first.ok()) return first.status();
    int last = *first;
    if (dash != absl::string_view::npos) {
      absl::StatusOr<int> end = ParseCpu(item.substr(dash + 1), text);
      if (!end.ok()) return end.status();
      if (*end < *first) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the range \"", item, "\" in \"", text, "\" runs backwards"));
      }
      last = *end;
    }
    for (int cpu = *first; cpu <= last; ++cpu) cpus.insert(cpu);
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ',';
    absl::StrAppend(&text, cpus[i]);
    if (j > i) absl::StrAppend(&text, "-", cpus[j]);
    i = j + 1;
  }
  return text;
}

absl::StatusOr<std::vector<int>> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    return absl::InternalError(
        absl::StrCat("sched_getaffinity: ", std::strerror(errno)));
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

absl::Status PinThisThread(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return absl::InternalError(absl::StrCat("sched_setaffinity(",
                                            FormatCpuList(cpus),
                                            "): ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace tailgate::server
