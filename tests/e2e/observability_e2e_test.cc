// End-to-end: what the real binary tells an operator — the version in the
// start line and in /metrics (tailgate_build_info), the process_* series,
// a dead replica's log volume under load, and the lookups of a resolved
// name in the log.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/testing/http_get.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/process/tailgate_process.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {
namespace {

using ::tailgate::server::testing::HttpGet;
using ::tailgate::server::testing::HttpReply;

std::string Runfile(const std::string& path) {
  const char* runfiles = std::getenv("TEST_SRCDIR");
  return absl::StrCat(runfiles != nullptr ? runfiles : ".", "/tailgate/", path);
}

std::string TestDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : ".";
}

// The VERSION file at the repository root, trimmed.
std::string VersionFile() {
  std::ifstream file(Runfile("VERSION"));
  std::stringstream text;
  text << file.rdbuf();
  return std::string(absl::StripAsciiWhitespace(text.str()));
}

// Replaced whole, as a writer that renames a new file over the old one.
void Replace(const std::string& path, const std::string& text) {
  const std::string temp = path + ".new";
  std::ofstream(temp, std::ios::trunc) << text;
  ASSERT_EQ(std::rename(temp.c_str(), path.c_str()), 0) << path;
}

// The value of `key` in a logfmt line ("" when absent).
std::string Field(absl::string_view line, absl::string_view key) {
  for (absl::string_view pair : absl::StrSplit(line, ' ')) {
    if (absl::ConsumePrefix(&pair, absl::StrCat(key, "="))) {
      return std::string(pair);
    }
  }
  return "";
}

// The value of the sample line of `text` that starts with `series` (its
// name and labels), or nullopt.
std::optional<double> Sample(const std::string& text,
                             absl::string_view series) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, series) && absl::ConsumePrefix(&line, " ")) {
      double value = 0;
      if (line == "+Inf") return 1.0 / 0.0;
      if (absl::SimpleAtod(line, &value)) return value;
    }
  }
  return std::nullopt;
}

// Lines of `text` that contain every one of `parts`.
int CountLines(const std::string& text, const std::vector<std::string>& parts) {
  int count = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    bool all = true;
    for (const std::string& part : parts) all &= absl::StrContains(line, part);
    if (all) ++count;
  }
  return count;
}

using ObservabilityE2eTest = TailgateE2eTest;

TEST_F(ObservabilityE2eTest, StartLineAndBuildInfoCarryTheVersion) {
  const std::string version = VersionFile();
  ASSERT_FALSE(version.empty());
  AddReplica(Always(Body("ok")));
  StartTailgate();
  const std::optional<std::string> start =
      tailgate_->WaitForLine("event=start", kWait);
  ASSERT_TRUE(start.has_value()) << tailgate_->stderr_text();
  EXPECT_TRUE(absl::StrContains(
      *start, absl::StrCat(" event=start version=", version, " commit=")))
      << *start;
  const std::string commit = Field(*start, "commit");
  EXPECT_FALSE(commit.empty()) << *start;

  absl::StatusOr<HttpReply> metrics =
      HttpGet(tailgate_->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(Sample(metrics->body,
                   absl::StrCat("tailgate_build_info{version=\"", version,
                                "\",commit=\"", commit, "\"}")),
            1.0)
      << metrics->body;
  EXPECT_EQ(CountLines(metrics->body, {"tailgate_build_info{"}), 1);
}

TEST_F(ObservabilityE2eTest, ProcessSeriesAreThoseOfTheSidecar) {
  AddReplica(Always(Body("ok")));
  const double before_start =
      absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  StartTailgate();
  v1::ReadResponse response;
  ASSERT_TRUE(Read("/x", &response).ok());
  absl::StatusOr<HttpReply> metrics =
      HttpGet(tailgate_->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  const std::string& text = metrics->body;
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());

  const std::optional<double> cpu = Sample(text, "process_cpu_seconds_total");
  ASSERT_TRUE(cpu.has_value()) << text;
  EXPECT_GE(*cpu, 0.0);
  EXPECT_LT(*cpu, 60.0);
  const std::optional<double> rss =
      Sample(text, "process_resident_memory_bytes");
  ASSERT_TRUE(rss.has_value()) << text;
  EXPECT_GT(*rss, 1 << 20);
  EXPECT_LT(*rss, 4.0 * (1 << 30));
  const std::optional<double> start =
      Sample(text, "process_start_time_seconds");
  ASSERT_TRUE(start.has_value()) << text;
  // Started by this test (clock ticks round it down to 10 ms).
  EXPECT_GE(*start, before_start - 1);
  EXPECT_LE(*start, now + 1);
  const std::optional<double> open_fds = Sample(text, "process_open_fds");
  const std::optional<double> max_fds = Sample(text, "process_max_fds");
  ASSERT_TRUE(open_fds.has_value()) << text;
  ASSERT_TRUE(max_fds.has_value()) << text;
  // Its listeners, the engine's loop, the scrape's own connection...
  EXPECT_GE(*open_fds, 8.0);
  EXPECT_LT(*open_fds, *max_fds);
  // The sidecar raises its soft limit to the hard one at start.
  EXPECT_GE(*max_fds, 1024.0);
  EXPECT_TRUE(Sample(text, "process_virtual_memory_bytes").has_value());
}

// A replica that refuses every connection, next to a healthy one, at 20
// reads a second: its breaker cycles ejected -> probing -> ejected several
// times a second (cooldown 100 ms), yet the log says it left service once
// and (under a minute) nothing more.
TEST_F(ObservabilityE2eTest, ADeadReplicaIsLoggedOncePerChangeNotPerProbe) {
  std::string dead_url;
  {
    Replica& gone = AddReplica(Always(Body("gone")));
    dead_url = gone.url();
    replicas_.clear();  // stopped: its port refuses connections
  }
  AddReplica(Always(Body("up")));
  StartTailgateWithBackends({dead_url, replicas_[0]->url()},
                            {"--cooldown=100ms", "--max_ejection_time=200ms",
                             "--failure_threshold=1"});
  const absl::Duration kRun = absl::Seconds(10);
  const absl::Time end = absl::Now() + kRun;
  int reads = 0;
  int failed = 0;
  for (absl::Time next = absl::Now(); next < end;
       next += absl::Milliseconds(50)) {  // 20 reads a second
    absl::SleepFor(next - absl::Now());
    v1::ReadResponse response;
    if (!Read("/x", &response).ok() || response.body() != "up") ++failed;
    ++reads;
  }
  EXPECT_GE(reads, 150);
  EXPECT_EQ(failed, 0);
  // It really cycled: many transitions, each of which a line per step
  // would have logged.
  const v1::GetStatsResponse stats = Stats();
  ASSERT_EQ(stats.replicas_size(), 2);
  EXPECT_GE(stats.replicas(0).generation(), 10u) << stats.DebugString();
  EXPECT_GE(stats.replicas(0).probes_failed(), 5u) << stats.DebugString();

  const std::string log = tailgate_->stderr_text();
  const int lines = CountLines(log, {absl::StrCat("replica=", dead_url)});
  EXPECT_EQ(lines, 1) << log;
  EXPECT_EQ(CountLines(log, {"event=replica_state", "upstream=\"\"",
                             absl::StrCat("replica=", dead_url), "to=ejected"}),
            1)
      << log;
}

// A resolved name: its first addresses, a move, a run of failed lookups
// (one line, not one per lookup) and the recovery are each logged, with
// the set's name as the metrics spell it.
TEST_F(ObservabilityE2eTest, NameLookupsAreLoggedOncePerChange) {
  Replica& fixed = AddReplica(Always(Body("s")));
  const std::string hosts = TestDir() + "/hosts";
  Replace(hosts, "127.0.0.2 disc.test\n");
  const std::string config = TestDir() + "/sidecar.textproto";
  Replace(config, absl::StrCat("upstreams {\n  replicas: \"", fixed.url(),
                               "\"\n}\n"
                               "upstreams {\n  name: \"disc\"\n"
                               "  replicas: \"http://disc.test:9\"\n"
                               "  resolve: true\n"
                               "  refresh_interval: \"100ms\"\n}\n"));
  absl::StatusOr<std::unique_ptr<TailgateProcess>> process =
      TailgateProcess::Start(
          TailgateBinary(), {"--config=" + config},
          {absl::StrCat("TAILGATE_TESTING_HOSTS_FILE=", hosts)});
  ASSERT_TRUE(process.ok()) << process.status();
  AdoptTailgate(*std::move(process));

  std::optional<std::string> line = tailgate_->WaitForLine(
      "event=dns_replicas_changed upstream=disc name=disc.test "
      "added=127.0.0.2 removed=\"\" addresses=1",
      kWait);
  ASSERT_TRUE(line.has_value()) << tailgate_->stderr_text();
  EXPECT_TRUE(absl::StrContains(*line, "level=info")) << *line;

  // A move, logged within the change interval (10 s) plus a lookup.
  const absl::Time moved = absl::Now();
  Replace(hosts, "127.0.0.3 disc.test\n127.0.0.4 disc.test\n");
  line = tailgate_->WaitForLine(
      "event=dns_replicas_changed upstream=disc name=disc.test "
      "added=127.0.0.3,127.0.0.4 removed=127.0.0.2 addresses=2",
      absl::Seconds(15));
  ASSERT_TRUE(line.has_value()) << tailgate_->stderr_text();
  EXPECT_LT(absl::Now() - moved, absl::Seconds(15));

  // The name stops resolving: 20 failed lookups (2 s), one line.
  Replace(hosts, "127.0.0.9 other.test\n");
  const absl::Time deadline = absl::Now() + kWait;
  v1::GetStatsResponse stats = Stats();
  while (stats.dns_refresh_failures() < 20 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));  // polls a counter
    stats = Stats();
  }
  ASSERT_GE(stats.dns_refresh_failures(), 20u);
  line = tailgate_->WaitForLine("event=dns_lookup_failed", kWait);
  ASSERT_TRUE(line.has_value()) << tailgate_->stderr_text();
  EXPECT_TRUE(absl::StrContains(*line, "level=warn")) << *line;
  EXPECT_TRUE(absl::StrContains(*line, "upstream=disc name=disc.test error="))
      << *line;
  EXPECT_TRUE(absl::StrContains(*line, " failures=1 kept=2")) << *line;
  EXPECT_EQ(CountLines(tailgate_->stderr_text(), {"event=dns_lookup_failed"}),
            1)
      << tailgate_->stderr_text();

  // Back: one line with the run's length.
  Replace(hosts, "127.0.0.3 disc.test\n127.0.0.4 disc.test\n");
  line = tailgate_->WaitForLine("event=dns_lookup_recovered", kWait);
  ASSERT_TRUE(line.has_value()) << tailgate_->stderr_text();
  EXPECT_TRUE(absl::StrContains(*line, "upstream=disc name=disc.test "))
      << *line;
  uint64_t failures = 0;
  EXPECT_TRUE(absl::SimpleAtoi(Field(*line, "failures"), &failures)) << *line;
  EXPECT_GE(failures, 20u) << *line;
  // Nothing changed meanwhile: no membership line beyond the two.
  EXPECT_EQ(
      CountLines(tailgate_->stderr_text(), {"event=dns_replicas_changed"}), 2)
      << tailgate_->stderr_text();
}

}  // namespace
}  // namespace tailgate::testing
