#include "cpus/cpu_set.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tailgate::server {
namespace {

// A cpu_set_t sized for kMaxCpus (glibc's own is 1024 CPUs, too small for
// the largest kernels' masks).
class DynamicCpuSet {
 public:
  DynamicCpuSet() : set_(CPU_ALLOC(kMaxCpus)), size_(CPU_ALLOC_SIZE(kMaxCpus)) {
    CPU_ZERO_S(size_, set_.get());
  }
  cpu_set_t* get() { return set_.get(); }
  size_t size() const { return size_; }
  void Set(int cpu) { CPU_SET_S(cpu, size_, set_.get()); }
  bool IsSet(int cpu) const { return CPU_ISSET_S(cpu, size_, set_.get()); }

 private:
  struct Free {
    void operator()(cpu_set_t* set) const { CPU_FREE(set); }
  };
  std::unique_ptr<cpu_set_t, Free> set_;
  size_t size_;
};

absl::StatusOr<int> ParseCpu(absl::string_view item) {
  // Digits only: SimpleAtoi alone would also take a sign and spaces.
  if (item.empty() ||
      !std::all_of(item.begin(), item.end(), absl::ascii_isdigit)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", item, "\" is not a CPU number"));
  }
  int cpu = 0;
  if (!absl::SimpleAtoi(item, &cpu) || cpu >= kMaxCpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("CPU numbers are below ", kMaxCpus, ", got ", item));
  }
  return cpu;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text) {
  if (text.empty()) return absl::InvalidArgumentError("empty CPU list");
  std::set<int> cpus;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    const size_t dash = item.find('-', 1);
    absl::StatusOr<int> first = ParseCpu(item.substr(0, dash));
    if (!first.ok()) return first.status();
    int last = *first;
    if (dash != absl::string_view::npos) {
      absl::StatusOr<int> end = ParseCpu(item.substr(dash + 1));
      if (!end.ok()) return end.status();
      if (*end < *first) {
        return absl::InvalidArgumentError(
            absl::StrCat("the range \"", item, "\" runs backwards"));
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
  DynamicCpuSet set;
  if (sched_getaffinity(0, set.size(), set.get()) != 0) {
    return absl::InternalError(
        absl::StrCat("sched_getaffinity: ", std::strerror(errno)));
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < kMaxCpus; ++cpu) {
    if (set.IsSet(cpu)) cpus.push_back(cpu);
  }
  return cpus;
}

absl::StatusOr<std::vector<int>> CpusToUse(absl::string_view text) {
  if (text.empty() || text == "any") return std::vector<int>();
  absl::StatusOr<std::vector<int>> allowed = AllowedCpus();
  if (!allowed.ok()) return allowed.status();
  if (allowed->empty()) {
    return absl::InternalError("the process may run on no CPU at all");
  }
  if (text == "last") return std::vector<int>{allowed->back()};
  absl::StatusOr<std::vector<int>> listed = ParseCpuList(text);
  if (!listed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("want any, last or CPUs such as 1 or 0-1,3: ",
                     listed.status().message()));
  }
  for (int cpu : *listed) {
    if (!std::binary_search(allowed->begin(), allowed->end(), cpu)) {
      return absl::InvalidArgumentError(
          absl::StrCat("CPU ", cpu, " is not one this process may use (",
                       FormatCpuList(*allowed), ")"));
    }
  }
  return listed;
}

absl::Status PinThisThread(const std::vector<int>& cpus) {
  DynamicCpuSet set;
  for (int cpu : cpus) set.Set(cpu);
  if (sched_setaffinity(0, set.size(), set.get()) != 0) {
    return absl::InternalError(absl::StrCat("sched_setaffinity(",
                                            FormatCpuList(cpus),
                                            "): ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace tailgate::server
