// ConfigReloader against a FakeEngine: what a reload applies, what it
// refuses and says, and what it counts.

#include "server/config/config_reload.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/config/config_file.h"
#include "server/config/config_load.h"
#include "server/config/schema/settings_schema.h"
#include "server/config/server_config.h"
#include "server/observability/log.h"
#include "server/testing/fake_engine.h"

namespace tailgate::server {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : ".", "/", name);
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

std::string Upstream(const std::string& name, const std::string& extra,
                     int replicas = 1) {
  std::string text = absl::StrCat("upstreams {\n  name: \"", name, "\"\n");
  for (int i = 0; i < replicas; ++i) {
    absl::StrAppend(&text, "  replicas: \"http://127.0.0.1:", 8001 + i, "\"\n");
  }
  return absl::StrCat(text, extra, "}\n");
}

class ConfigReloadTest : public ::testing::Test {
 protected:
  void Start(const std::string& text,
             absl::flat_hash_set<std::string> given = {}) {
    path_ = TempPath("reload.textproto");
    Write(path_, text);
    log_path_ = TempPath("reload.log");
    log_fd_ = open(log_path_.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    ASSERT_GE(log_fd_, 0);
    log_ = std::make_unique<Logger>(LogFormat::kLogfmt, log_fd_);
    command_line_.config = path_;
    on_command_line_ = [given](absl::string_view name) {
      return given.contains(name);
    };
    absl::StatusOr<LoadedConfig> loaded =
        LoadConfig(command_line_, on_command_line_);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    started_ = *std::move(loaded);
    reloader_ = std::make_unique<ConfigReloader>(started_, engine_, *log_);
  }

  ~ConfigReloadTest() override {
    if (log_fd_ >= 0) close(log_fd_);
  }

  std::string LogText() const {
    std::ifstream in(log_path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string path_;
  std::string log_path_;
  int log_fd_ = -1;
  std::unique_ptr<Logger> log_;
  RawFlags command_line_;
  OnCommandLine on_command_line_;
  LoadedConfig started_;
  testing::FakeEngine engine_;
  std::unique_ptr<ConfigReloader> reloader_;
};

TEST_F(ConfigReloadTest, ChangedFileReplacesTheUpstreams) {
  Start(Upstream("a", "") + Upstream("b", ""));
  Write(path_, Upstream("a", "  hedge_burst: 7\n", 2));
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);

  ASSERT_EQ(engine_.upstream_updates().size(), 1u);
  const std::vector<hedge::UpstreamConfig> sets = engine_.upstream_updates()[0];
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].name, "a");
  EXPECT_EQ(sets[0].replicas.size(), 2u);
  EXPECT_DOUBLE_EQ(sets[0].budget.burst, 7);
  EXPECT_EQ(reloader_->Counts().ok, 1u);
  EXPECT_TRUE(absl::StrContains(
      LogText(), "event=config_reload result=ok upstreams=1 replicas=2"))
      << LogText();
  EXPECT_FALSE(absl::StrContains(LogText(), "needs_restart")) << LogText();
}

// Ejection, probe and give-up settings are per upstream: a reload applies
// them, and none needs a restart.
TEST_F(ConfigReloadTest, ReplicaHealthSettingsAreApplied) {
  Start(Upstream("a", ""));
  Write(path_, Upstream("a",
                        "  ejection_failure_rate: 0.5\n"
                        "  ejection_min_requests: 20\n"
                        "  ejection_window: \"5s\"\n"
                        "  max_ejection_time: \"30s\"\n"
                        "  probe_successes: 3\n"
                        "  ramp_up: \"0s\"\n"
                        "  max_ejected_share: 0.25\n"
                        "  give_up_factor: 0\n"
                        "  give_up_min: \"5ms\"\n"
                        "  give_up_max: \"1s\"\n"
                        "  probe_path: \"/healthz\"\n"
                        "  probe_method: \"HEAD\"\n"));
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  ASSERT_EQ(engine_.upstream_updates().size(), 1u) << LogText();
  // A copy: upstream_updates() returns its list by value.
  const hedge::UpstreamConfig a = engine_.upstream_updates()[0][0];
  EXPECT_DOUBLE_EQ(a.circuit.failure_rate, 0.5);
  EXPECT_EQ(a.circuit.min_requests, 20);
  EXPECT_EQ(a.circuit.window, absl::Seconds(5));
  EXPECT_EQ(a.circuit.max_ejection_time, absl::Seconds(30));
  EXPECT_EQ(a.circuit.probe_successes, 3);
  EXPECT_EQ(a.circuit.ramp_up, absl::ZeroDuration());
  EXPECT_DOUBLE_EQ(a.circuit.max_ejected_share, 0.25);
  EXPECT_DOUBLE_EQ(a.give_up.factor, 0);
  EXPECT_EQ(a.give_up.min, absl::Milliseconds(5));
  EXPECT_EQ(a.give_up.max, absl::Seconds(1));
  EXPECT_EQ(a.probe_path, "/healthz");
  EXPECT_TRUE(a.probe_head);
  EXPECT_EQ(reloader_->Counts().ok, 1u);
  EXPECT_FALSE(absl::StrContains(LogText(), "needs_restart")) << LogText();
}

// Coalescing is per upstream: off unless the set (or --coalesce) turns it
// on, and a reload turns it on or off with no restart.
TEST_F(ConfigReloadTest, CoalesceIsPerUpstreamAndReloadable) {
  Start(Upstream("a", "") + Upstream("b", "  coalesce: true\n"));
  ASSERT_EQ(started_.config.engine.upstreams.size(), 2u);
  EXPECT_FALSE(started_.config.engine.upstreams[0].coalesce);
  EXPECT_TRUE(started_.config.engine.upstreams[1].coalesce);
  Write(path_, Upstream("a", "  coalesce: true\n") +
                   Upstream("b", "  coalesce: false\n"));
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  ASSERT_EQ(engine_.upstream_updates().size(), 1u) << LogText();
  const std::vector<hedge::UpstreamConfig> sets = engine_.upstream_updates()[0];
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_TRUE(sets[0].coalesce);
  EXPECT_FALSE(sets[1].coalesce);
  EXPECT_FALSE(absl::StrContains(LogText(), "needs_restart")) << LogText();
}

// --coalesce is the default of every set that does not say.
TEST_F(ConfigReloadTest, CoalesceFlagIsTheDefault) {
  command_line_.coalesce = true;
  Start(Upstream("a", "") + Upstream("b", "  coalesce: false\n"), {"coalesce"});
  ASSERT_EQ(started_.config.engine.upstreams.size(), 2u);
  EXPECT_TRUE(started_.config.engine.upstreams[0].coalesce);
  EXPECT_FALSE(started_.config.engine.upstreams[1].coalesce);
}

TEST_F(ConfigReloadTest, UnchangedFileIsLeftAloneButSighupReloads) {
  Start(Upstream("a", ""));
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  EXPECT_TRUE(engine_.upstream_updates().empty());
  EXPECT_EQ(reloader_->Counts().ok, 0u);
  reloader_->Reload(ConfigReloader::Trigger::kSignal);
  EXPECT_EQ(engine_.upstream_updates().size(), 1u);
  EXPECT_EQ(reloader_->Counts().ok, 1u);
}

TEST_F(ConfigReloadTest, BadFileIsRejectedWithTheStartUpLineAndCounted) {
  Start(Upstream("a", ""));
  Write(path_, Upstream("a", "  hedge_fraction: 1.5\n"));
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  EXPECT_TRUE(engine_.upstream_updates().empty());
  EXPECT_EQ(reloader_->Counts().rejected, 1u);
  EXPECT_EQ(reloader_->Counts().ok, 0u);
  const std::string expected = absl::StrCat(
      path_, ":4:3: upstreams.a.hedge_fraction: must be in [0, 1], got 1.5");
  EXPECT_TRUE(absl::StrContains(LogText(), "result=rejected")) << LogText();
  EXPECT_TRUE(absl::StrContains(LogText(), expected)) << LogText();

  // A syntax error, and a file gone: rejected too.
  Write(path_, "upstreams {\n");
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  unlink(path_.c_str());
  reloader_->Reload(ConfigReloader::Trigger::kSignal);
  EXPECT_EQ(reloader_->Counts().rejected, 3u);
  EXPECT_TRUE(absl::StrContains(LogText(), "cannot read")) << LogText();
  EXPECT_TRUE(engine_.upstream_updates().empty());
}

// The last load's outcome stays "rejected" through any number of bad
// files and only a good one sets it back; the time is the last applied
// load's, start-up's at first.
TEST_F(ConfigReloadTest, LastReloadSuccessStaysFalseUntilAGoodFileLands) {
  const absl::Time before_start = absl::Now();
  Start(Upstream("a", ""));
  const absl::Time after_start = absl::Now();
  ReloadSnapshot counts = reloader_->Counts();
  EXPECT_TRUE(counts.last_successful);
  EXPECT_GE(counts.last_success, before_start);
  EXPECT_LE(counts.last_success, after_start);
  // Whole nanoseconds survive the snapshot.
  EXPECT_EQ(absl::ToUnixNanos(counts.last_success),
            absl::ToUnixNanos(reloader_->Counts().last_success));

  Write(path_, Upstream("a", "  hedge_fraction: 1.5\n"));
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  counts = reloader_->Counts();
  EXPECT_FALSE(counts.last_successful);
  EXPECT_LE(counts.last_success, after_start);
  // Unchanged bytes are no reload: still rejected. SIGHUP on the same
  // bad file, and another bad file: still rejected.
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  reloader_->Reload(ConfigReloader::Trigger::kSignal);
  Write(path_, "upstreams {\n");
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  counts = reloader_->Counts();
  EXPECT_FALSE(counts.last_successful);
  EXPECT_EQ(counts.rejected, 3u);
  EXPECT_LE(counts.last_success, after_start);

  const absl::Time before_fix = absl::Now();
  Write(path_, Upstream("a", "  hedge_burst: 3\n"));
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  counts = reloader_->Counts();
  EXPECT_TRUE(counts.last_successful);
  EXPECT_EQ(counts.ok, 1u);
  EXPECT_GE(counts.last_success, before_fix);
  EXPECT_LE(counts.last_success, absl::Now());
}

TEST_F(ConfigReloadTest, UpstreamLimitsAreCheckedAtTheirEdges) {
  Start("timeout: \"1s\"\nmax_response_bytes: 1000\n" + Upstream("a", ""));
  // At the global values: accepted.
  Write(path_, "timeout: \"1s\"\nmax_response_bytes: 1000\n" +
                   Upstream("a",
                            "  timeout: \"1s\"\n  max_response_bytes: 1000\n"
                            "  max_requests: 1000000\n"));
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  ASSERT_EQ(engine_.upstream_updates().size(), 1u);
  const hedge::UpstreamConfig a = engine_.upstream_updates()[0][0];
  EXPECT_EQ(a.timeout, absl::Seconds(1));
  EXPECT_EQ(a.max_response_bytes, 1000);
  EXPECT_EQ(a.max_requests, 1000000);
  // One past each: rejected, naming the field.
  for (const std::string& over :
       {std::string("  timeout: \"1001ms\"\n"),
        std::string("  max_response_bytes: 1001\n"),
        std::string("  max_requests: 1000001\n"),
        std::string("  refresh_interval: \"9ms\"\n")}) {
    Write(path_,
          "timeout: \"1s\"\nmax_response_bytes: 1000\n" + Upstream("a", over));
    reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  }
  EXPECT_EQ(reloader_->Counts().rejected, 4u);
  const std::string log = LogText();
  EXPECT_TRUE(absl::StrContains(log, ":6:3: upstreams.a.timeout: must be"))
      << log;
  EXPECT_TRUE(
      absl::StrContains(log, ":6:3: upstreams.a.max_response_bytes: must be"))
      << log;
  EXPECT_TRUE(absl::StrContains(log, ":6:3: upstreams.a.max_requests: must be"))
      << log;
  EXPECT_TRUE(
      absl::StrContains(log, ":6:3: upstreams.a.refresh_interval: must be"))
      << log;
}

TEST_F(ConfigReloadTest, ChangedGlobalsAreNamedAsNeedingARestart) {
  Start("max_requests: 64\n" + Upstream("a", ""), {"timeout"});
  Write(path_,
        "max_requests: 65\nlisten: \"127.0.0.1:7001\"\n"
        "listen_front: \"grpc\"\ntimeout: \"3s\"\n" +
            Upstream("a", ""));
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  EXPECT_EQ(engine_.upstream_updates().size(), 1u);  // upstreams still apply
  // --timeout on the command line still wins: not a change. The streams
  // per connection follow max_requests when not set.
  EXPECT_TRUE(absl::StrContains(LogText(),
                                "event=config_reload_needs_restart "
                                "fields=listen,listen_front,max_requests,"
                                "max_streams_per_connection "))
      << LogText();
}

// tenant_share sizes admission's per-tenant cap at start-up: a change is
// named as needing a restart, while the upstreams (whose own hedge share
// it defaults) still apply.
TEST_F(ConfigReloadTest, ChangedTenantShareNeedsARestart) {
  Start("tenant_share: 0.5\n" + Upstream("a", ""));
  Write(path_, "tenant_share: 0.25\n" + Upstream("a", ""));
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  EXPECT_EQ(reloader_->Counts().ok, 1u);
  ASSERT_EQ(engine_.upstream_updates().size(), 1u);
  EXPECT_EQ(engine_.upstream_updates()[0][0].tenant_share, 0.25);
  EXPECT_TRUE(absl::StrContains(
      LogText(), "event=config_reload_needs_restart fields=tenant_share "))
      << LogText();
}

TEST_F(ConfigReloadTest, UnchangedTenantShareIsNoRestart) {
  Start("tenant_share: 0.5\n" + Upstream("a", ""));
  Write(path_, "tenant_share: 0.5\n" + Upstream("a", "  hedge_burst: 3\n"));
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  EXPECT_EQ(reloader_->Counts().ok, 1u);
  EXPECT_FALSE(absl::StrContains(LogText(), "config_reload_needs_restart"))
      << LogText();
}

// Every setting the schema declares reloadable: false is compared, and
// nothing else.
TEST(NeedsRestartTest, ComparesExactlyTheSchemasNonReloadableSettings) {
  EXPECT_EQ(ConfigReloader::ComparedFields(), NeedsRestartFields());
}

TEST_F(ConfigReloadTest, DefaultSetCannotSetLimitsOfItsOwn) {
  Start(Upstream("", ""));
  Write(path_, Upstream("", "  timeout: \"1s\"\n"));
  reloader_->Reload(ConfigReloader::Trigger::kFileChanged);
  EXPECT_EQ(reloader_->Counts().rejected, 1u);
  EXPECT_TRUE(absl::StrContains(
      LogText(), ":4:3: timeout: the default set's limits are the global"))
      << LogText();
}

}  // namespace
}  // namespace tailgate::server
