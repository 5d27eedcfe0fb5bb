// The replica-health flags and config fields (health_settings.h), through
// the whole parse: defaults, every value carried over, the edges of each
// range, and errors naming the flag or the file's place.

#include "server/config/health_settings.h"

#include <string>

#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "server/config/config_file.h"
#include "server/config/server_config.h"
#include "tailgate/v1/config.pb.h"

namespace tailgate::server {
namespace {

RawFlags Valid() {
  RawFlags flags;
  flags.backends = "http://127.0.0.1:8001,http://127.0.0.1:8002";
  return flags;
}

absl::StatusOr<hedge::UpstreamConfig> Upstream(const RawFlags& flags) {
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(flags);
  if (!config.ok()) return config.status();
  return config->engine.upstreams[0];
}

// `flags` with `set` applied: OK, or its one-line error.
std::string Check(void (*set)(RawHealth&)) {
  RawFlags flags = Valid();
  set(flags.health);
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(flags);
  return config.ok() ? "ok" : std::string(config.status().message());
}

TEST(HealthSettingsTest, DefaultsAreTheEngines) {
  absl::StatusOr<hedge::UpstreamConfig> upstream = Upstream(Valid());
  ASSERT_TRUE(upstream.ok()) << upstream.status();
  const hedge::CircuitConfig& circuit = upstream->circuit;
  EXPECT_EQ(circuit.failure_threshold, 5);
  EXPECT_EQ(circuit.cooldown, absl::Seconds(1));
  EXPECT_DOUBLE_EQ(circuit.failure_rate, 0.3);
  EXPECT_EQ(circuit.min_requests, 5);
  EXPECT_EQ(circuit.window, absl::Seconds(10));
  EXPECT_EQ(circuit.max_ejection_time, absl::Seconds(10));
  EXPECT_EQ(circuit.probe_successes, 2);
  EXPECT_EQ(circuit.ramp_up, absl::Seconds(5));
  EXPECT_DOUBLE_EQ(circuit.max_ejected_share, 0.5);
  EXPECT_DOUBLE_EQ(upstream->give_up.factor, 3);
  EXPECT_EQ(upstream->give_up.min, absl::Milliseconds(20));
  EXPECT_EQ(upstream->give_up.max, absl::Milliseconds(500));
  EXPECT_EQ(upstream->probe_path, "");
  EXPECT_FALSE(upstream->probe_head);
}

TEST(HealthSettingsTest, EveryFlagIsCarriedOver) {
  RawFlags flags = Valid();
  flags.health.ejection_failure_rate = "0.5";
  flags.health.ejection_min_requests = "20";
  flags.health.ejection_window = "30s";
  flags.health.max_ejection_time = "1m";
  flags.health.probe_successes = "3";
  flags.health.ramp_up = "0";
  flags.health.max_ejected_share = "0.25";
  flags.health.give_up_factor = "0";
  flags.health.give_up_min = "5ms";
  flags.health.give_up_max = "2s";
  flags.health.probe_path = "/healthz?deep=1";
  flags.health.probe_method = "HEAD";
  absl::StatusOr<hedge::UpstreamConfig> upstream = Upstream(flags);
  ASSERT_TRUE(upstream.ok()) << upstream.status();
  EXPECT_DOUBLE_EQ(upstream->circuit.failure_rate, 0.5);
  EXPECT_EQ(upstream->circuit.min_requests, 20);
  EXPECT_EQ(upstream->circuit.window, absl::Seconds(30));
  EXPECT_EQ(upstream->circuit.max_ejection_time, absl::Minutes(1));
  EXPECT_EQ(upstream->circuit.probe_successes, 3);
  EXPECT_EQ(upstream->circuit.ramp_up, absl::ZeroDuration());
  EXPECT_DOUBLE_EQ(upstream->circuit.max_ejected_share, 0.25);
  EXPECT_DOUBLE_EQ(upstream->give_up.factor, 0);
  EXPECT_EQ(upstream->give_up.min, absl::Milliseconds(5));
  EXPECT_EQ(upstream->give_up.max, absl::Seconds(2));
  EXPECT_EQ(upstream->probe_path, "/healthz?deep=1");
  EXPECT_TRUE(upstream->probe_head);
}

TEST(HealthSettingsTest, EjectionEdges) {
  EXPECT_EQ(Check([](RawHealth& h) { h.ejection_failure_rate = "1"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.ejection_failure_rate = "0"; }),
            "--ejection_failure_rate: must be in (0, 1], got 0");
  EXPECT_EQ(Check([](RawHealth& h) { h.ejection_failure_rate = "1.01"; }),
            "--ejection_failure_rate: must be in (0, 1], got 1.01");
  EXPECT_EQ(Check([](RawHealth& h) { h.ejection_failure_rate = "most"; }),
            "--ejection_failure_rate: want a number, got \"most\"");
  EXPECT_EQ(Check([](RawHealth& h) { h.ejection_min_requests = "1"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.ejection_min_requests = "1000000"; }),
            "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.ejection_min_requests = "0"; }),
            "--ejection_min_requests: must be in [1, 1000000], got 0");
  EXPECT_EQ(Check([](RawHealth& h) { h.ejection_min_requests = "1000001"; }),
            "--ejection_min_requests: must be in [1, 1000000], got 1000001");
  EXPECT_EQ(Check([](RawHealth& h) { h.ejection_window = "100ms"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.ejection_window = "1h"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.ejection_window = "99ms"; }),
            "--ejection_window: must be in [100ms, 1h], got 99ms");
  EXPECT_EQ(Check([](RawHealth& h) { h.ejection_window = "61m"; }),
            "--ejection_window: must be in [100ms, 1h], got 1h1m");
  EXPECT_EQ(Check([](RawHealth& h) { h.max_ejected_share = "0"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.max_ejected_share = "1"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.max_ejected_share = "-0.1"; }),
            "--max_ejected_share: must be in [0, 1], got -0.1");
  EXPECT_EQ(Check([](RawHealth& h) { h.max_ejected_share = "1.5"; }),
            "--max_ejected_share: must be in [0, 1], got 1.5");
}

TEST(HealthSettingsTest, MaxEjectionTimeEdgesAndItsDefault) {
  EXPECT_EQ(Check([](RawHealth& h) { h.max_ejection_time = "1s"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.max_ejection_time = "1h"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.max_ejection_time = "999ms"; }),
            "--max_ejection_time: must be in [cooldown (1s), 1h], got 999ms");
  EXPECT_EQ(Check([](RawHealth& h) { h.max_ejection_time = "2h"; }),
            "--max_ejection_time: must be in [cooldown (1s), 1h], got 2h");
  // Not given: 10s, or a longer --cooldown.
  RawFlags flags = Valid();
  flags.cooldown = "1m";
  absl::StatusOr<hedge::UpstreamConfig> upstream = Upstream(flags);
  ASSERT_TRUE(upstream.ok()) << upstream.status();
  EXPECT_EQ(upstream->circuit.max_ejection_time, absl::Minutes(1));
  flags.health.max_ejection_time = "10s";  // given: held to its range
  EXPECT_EQ(Upstream(flags).status().message(),
            "--max_ejection_time: must be in [cooldown (1m), 1h], got 10s");
}

TEST(HealthSettingsTest, ProbeEdges) {
  EXPECT_EQ(Check([](RawHealth& h) { h.probe_successes = "1"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.probe_successes = "100"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.probe_successes = "0"; }),
            "--probe_successes: must be in [1, 100], got 0");
  EXPECT_EQ(Check([](RawHealth& h) { h.probe_successes = "101"; }),
            "--probe_successes: must be in [1, 100], got 101");
  EXPECT_EQ(Check([](RawHealth& h) { h.ramp_up = "0s"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.ramp_up = "1h"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.ramp_up = "-1s"; }),
            "--ramp_up: must be in [0, 1h], got -1s");
  EXPECT_EQ(Check([](RawHealth& h) { h.ramp_up = "90m"; }),
            "--ramp_up: must be in [0, 1h], got 1h30m");
  EXPECT_EQ(Check([](RawHealth& h) { h.probe_path = "/"; }), "ok");
  EXPECT_TRUE(absl::StartsWith(
      Check([](RawHealth& h) { h.probe_path = "healthz"; }), "--probe_path: "))
      << Check([](RawHealth& h) { h.probe_path = "healthz"; });
  EXPECT_EQ(Check([](RawHealth& h) { h.probe_method = "GET"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.probe_method = "head"; }),
            "--probe_method: want GET or HEAD, got \"head\"");
}

TEST(HealthSettingsTest, GiveUpEdges) {
  EXPECT_EQ(Check([](RawHealth& h) { h.give_up_factor = "0"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.give_up_factor = "1"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.give_up_factor = "100"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.give_up_factor = "0.5"; }),
            "--give_up_factor: must be 0 (off) or in [1, 100], got 0.5");
  EXPECT_EQ(Check([](RawHealth& h) { h.give_up_factor = "101"; }),
            "--give_up_factor: must be 0 (off) or in [1, 100], got 101");
  EXPECT_EQ(Check([](RawHealth& h) { h.give_up_min = "1us"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.give_up_min = "0s"; }),
            "--give_up_min: must be in (0, 1h], got 0");
  EXPECT_EQ(Check([](RawHealth& h) { h.give_up_max = "20ms"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.give_up_max = "1h"; }), "ok");
  EXPECT_EQ(Check([](RawHealth& h) { h.give_up_max = "19ms"; }),
            "--give_up_max: must be in [give_up_min (20ms), 1h], got 19ms");
  EXPECT_EQ(Check([](RawHealth& h) { h.give_up_max = "2h"; }),
            "--give_up_max: must be in [give_up_min (20ms), 1h], got 2h");
}

// The config file: each field of an upstream, its errors at its place, and
// the flags as the defaults of upstreams that leave a field out.
absl::StatusOr<ServerConfig> Load(const std::string& text,
                                  RawFlags flags = RawFlags()) {
  absl::StatusOr<RawFlags> merged =
      ApplyConfigText("sidecar.textproto", text, std::move(flags),
                      [](absl::string_view) { return false; });
  if (!merged.ok()) return merged.status();
  return ConfigFromRawFlags(*merged);
}

std::string UpstreamA(const std::string& fields) {
  return absl::StrCat(
      "upstreams {\n  name: \"a\"\n  replicas: "
      "\"http://127.0.0.1:1\"\n",
      fields, "}\n");
}

TEST(HealthSettingsTest, AnUpstreamSetsItsOwn) {
  RawFlags flags;
  flags.health.probe_path = "/healthz";
  absl::StatusOr<ServerConfig> config = Load(
      UpstreamA("  ejection_failure_rate: 0.5\n  ejection_min_requests: 4\n"
                "  ejection_window: \"2s\"\n  max_ejection_time: \"20s\"\n"
                "  probe_successes: 1\n  ramp_up: \"1s\"\n"
                "  max_ejected_share: 1\n  give_up_factor: 2\n"
                "  give_up_min: \"1ms\"\n  give_up_max: \"50ms\"\n"
                "  probe_path: \"\"\n  probe_method: \"HEAD\"\n") +
          "upstreams {\n  name: \"b\"\n  replicas: \"http://127.0.0.1:2\"\n}\n",
      flags);
  ASSERT_TRUE(config.ok()) << config.status();
  const hedge::UpstreamConfig& a = config->engine.upstreams[0];
  EXPECT_DOUBLE_EQ(a.circuit.failure_rate, 0.5);
  EXPECT_EQ(a.circuit.min_requests, 4);
  EXPECT_EQ(a.circuit.window, absl::Seconds(2));
  EXPECT_EQ(a.circuit.max_ejection_time, absl::Seconds(20));
  EXPECT_EQ(a.circuit.probe_successes, 1);
  EXPECT_EQ(a.circuit.ramp_up, absl::Seconds(1));
  EXPECT_DOUBLE_EQ(a.circuit.max_ejected_share, 1);
  EXPECT_DOUBLE_EQ(a.give_up.factor, 2);
  EXPECT_EQ(a.give_up.min, absl::Milliseconds(1));
  EXPECT_EQ(a.give_up.max, absl::Milliseconds(50));
  EXPECT_EQ(a.probe_path, "");  // set: beats the flag's /healthz
  EXPECT_TRUE(a.probe_head);
  const hedge::UpstreamConfig& b = config->engine.upstreams[1];
  EXPECT_EQ(b.probe_path, "/healthz");  // left out: the flag's
  EXPECT_DOUBLE_EQ(b.circuit.failure_rate, 0.3);
  EXPECT_FALSE(b.probe_head);
}

TEST(HealthSettingsTest, AnUpstreamsBadValueNamesItsPlace) {
  EXPECT_EQ(
      Load(UpstreamA("  ejection_failure_rate: 1.5\n")).status().message(),
      "sidecar.textproto:4:3: upstreams.a.ejection_failure_rate: must "
      "be in (0, 1], got 1.5");
  EXPECT_EQ(Load(UpstreamA("  give_up_max: \"1ms\"\n")).status().message(),
            "sidecar.textproto:4:3: upstreams.a.give_up_max: must be in "
            "[give_up_min (20ms), 1h], got 1ms");
  EXPECT_EQ(Load(UpstreamA("  probe_method: \"PUT\"\n")).status().message(),
            "sidecar.textproto:4:3: upstreams.a.probe_method: want GET or "
            "HEAD, got \"PUT\"");
  EXPECT_EQ(Load(UpstreamA("  ramp_up: \"soon\"\n")).status().message(),
            "sidecar.textproto:4:3: upstreams.a.ramp_up: want a duration "
            "such as 250ms or 1s, got \"soon\"");
  // A long cooldown of its own moves the default longest ejection too.
  absl::StatusOr<ServerConfig> config =
      Load(UpstreamA("  cooldown: \"30s\"\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->engine.upstreams[0].circuit.max_ejection_time,
            absl::Seconds(30));
  // Unless --max_ejection_time says otherwise.
  RawFlags flags;
  flags.health.max_ejection_time = "10s";
  EXPECT_EQ(Load(UpstreamA("  cooldown: \"30s\"\n"), flags).status().message(),
            "sidecar.textproto:1:1: upstreams.a.max_ejection_time (from "
            "--max_ejection_time): must be in [cooldown (30s), 1h], got 10s");
}

// Each health field of an upstream is named like the flag that is its
// default.
TEST(HealthSettingsTest, EveryUpstreamHealthFieldIsAFlag) {
  const google::protobuf::Descriptor& type = *v1::UpstreamConfig::descriptor();
  int fields = 0;
  for (int i = 0; i < type.field_count(); ++i) {
    if (type.field(i)->number() < 40 || type.field(i)->number() > 51) continue;
    ++fields;
    EXPECT_NE(absl::FindCommandLineFlag(type.field(i)->name()), nullptr)
        << type.field(i)->name();
  }
  EXPECT_EQ(fields, 12);
}

}  // namespace
}  // namespace tailgate::server
