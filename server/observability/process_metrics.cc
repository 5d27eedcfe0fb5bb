#include "server/observability/process_metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "prometheus/metric_type.h"
#include "server/observability/metric_builders.h"

namespace tailgate::server {
namespace {

using metrics_internal::Counter;
using metrics_internal::Family;
using metrics_internal::Gauge;
using prometheus::MetricFamily;
using prometheus::MetricType;

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::UnavailableError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

absl::Status Malformed(const std::string& path, absl::string_view what) {
  return absl::DataLossError(absl::StrCat(path, ": ", what));
}

// The fields of /proc/PID/stat after "pid (comm)", numbered as proc(5)
// numbers them: fields[0] is field 3 (state). comm may hold spaces and
// parentheses: it ends at the last ')'.
absl::StatusOr<std::vector<absl::string_view>> StatFields(
    const std::string& path, absl::string_view text) {
  const size_t end = text.rfind(')');
  if (end == absl::string_view::npos) return Malformed(path, "no \"(comm)\"");
  return std::vector<absl::string_view>(
      absl::StrSplit(text.substr(end + 1), ' ', absl::SkipWhitespace()));
}

absl::StatusOr<double> Field(const std::string& path,
                             const std::vector<absl::string_view>& fields,
                             int number) {
  const size_t index = number - 3;
  double value = 0;
  if (index >= fields.size() || !absl::SimpleAtod(fields[index], &value)) {
    return Malformed(path, absl::StrCat("no field ", number));
  }
  return value;
}

// btime: the boot time, seconds since the epoch.
absl::StatusOr<double> BootTime(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (absl::ConsumePrefix(&line, "btime ")) {
      double value = 0;
      if (absl::SimpleAtod(absl::StripAsciiWhitespace(line), &value)) {
        return value;
      }
    }
  }
  return Malformed(path, "no btime");
}

// The soft limit of "Max open files" in a limits file.
absl::StatusOr<double> MaxOpenFiles(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (!absl::ConsumePrefix(&line, "Max open files")) continue;
    const std::vector<absl::string_view> columns =
        absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (columns.empty()) break;
    if (columns[0] == "unlimited") {
      return std::numeric_limits<double>::infinity();
    }
    double value = 0;
    if (absl::SimpleAtod(columns[0], &value)) return value;
    break;
  }
  return Malformed(path, "no \"Max open files\"");
}

// Entries of the fd directory, without "." and "..", and without the
// descriptor that reads it when it is this process's own.
absl::StatusOr<double> OpenFds(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot list ", path));
  }
  const std::string own = absl::StrCat(dirfd(dir));
  const bool self = path == "/proc/self/fd" ||
                    path == absl::StrCat("/proc/", getpid(), "/fd");
  double count = 0;
  while (const dirent* entry = readdir(dir)) {
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (self && name == own) continue;
    ++count;
  }
  closedir(dir);
  return count;
}

}  // namespace

absl::StatusOr<ProcessStats> ReadProcessStats(const ProcFiles& files) {
  const std::string stat_path = files.process + "/stat";
  absl::StatusOr<std::string> stat = ReadFile(stat_path);
  if (!stat.ok()) return stat.status();
  absl::StatusOr<std::vector<absl::string_view>> fields =
      StatFields(stat_path, *stat);
  if (!fields.ok()) return fields.status();
  // proc(5): 14 utime, 15 stime, 22 starttime (clock ticks), 23 vsize
  // (bytes), 24 rss (pages).
  absl::StatusOr<double> utime = Field(stat_path, *fields, 14);
  absl::StatusOr<double> stime = Field(stat_path, *fields, 15);
  absl::StatusOr<double> start = Field(stat_path, *fields, 22);
  absl::StatusOr<double> vsize = Field(stat_path, *fields, 23);
  absl::StatusOr<double> rss = Field(stat_path, *fields, 24);
  for (const absl::StatusOr<double>* field :
       {&utime, &stime, &start, &vsize, &rss}) {
    if (!field->ok()) return field->status();
  }
  absl::StatusOr<double> boot = BootTime(files.system_stat);
  if (!boot.ok()) return boot.status();
  absl::StatusOr<double> max_fds = MaxOpenFiles(files.process + "/limits");
  if (!max_fds.ok()) return max_fds.status();
  absl::StatusOr<double> open_fds = OpenFds(files.process + "/fd");
  if (!open_fds.ok()) return open_fds.status();

  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  ProcessStats stats;
  stats.cpu_seconds = (*utime + *stime) / ticks;
  stats.resident_bytes = *rss * page;
  stats.virtual_bytes = *vsize;
  stats.start_time_seconds = *boot + *start / ticks;
  stats.open_fds = *open_fds;
  stats.max_fds = *max_fds;
  return stats;
}

std::vector<MetricFamily> ProcessFamilies(const ProcessStats& stats) {
  std::vector<MetricFamily> families;
  auto add = [&families](const char* name, const char* help, MetricType type,
                         prometheus::ClientMetric metric) {
    MetricFamily family = Family(name, help, type);
    family.metric.push_back(std::move(metric));
    families.push_back(std::move(family));
  };
  add("process_cpu_seconds_total",
      "Total user and system CPU time spent in seconds.", MetricType::Counter,
      Counter(stats.cpu_seconds));
  add("process_resident_memory_bytes", "Resident memory size in bytes.",
      MetricType::Gauge, Gauge(stats.resident_bytes));
  add("process_virtual_memory_bytes", "Virtual memory size in bytes.",
      MetricType::Gauge, Gauge(stats.virtual_bytes));
  add("process_start_time_seconds",
      "Start time of the process since unix epoch in seconds.",
      MetricType::Gauge, Gauge(stats.start_time_seconds));
  add("process_open_fds", "Number of open file descriptors.", MetricType::Gauge,
      Gauge(stats.open_fds));
  add("process_max_fds", "Maximum number of open file descriptors.",
      MetricType::Gauge, Gauge(stats.max_fds));
  return families;
}

}  // namespace tailgate::server
