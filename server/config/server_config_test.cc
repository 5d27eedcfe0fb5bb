#include "server/config/server_config.h"

#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cpus/cpu_set.h"
#include "gtest/gtest.h"
#include "hedge/errors/field_error.h"
#include "server/config/command_line_flags.h"

ABSL_DECLARE_FLAG(std::string, backends);
ABSL_DECLARE_FLAG(std::string, hedge_delay);
ABSL_DECLARE_FLAG(bool, backend_http2);

namespace tailgate::server {
namespace {

RawFlags Valid() {
  RawFlags flags;
  flags.backends = "http://127.0.0.1:8001,http://127.0.0.1:8002";
  return flags;
}

// The error for `flags`, which must be INVALID_ARGUMENT on one line.
std::string ErrorOf(const RawFlags& flags) {
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(flags);
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(config.status().message());
  EXPECT_FALSE(absl::StrContains(message, "\n")) << message;
  return message;
}

TEST(ServerConfigTest, DefaultsMatchTheDesign) {
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(Valid());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->listen.ToString(), "127.0.0.1:8080");
  EXPECT_EQ(config->admin.ToString(), "127.0.0.1:9090");
  EXPECT_EQ(config->metrics_listen.ToString(), "127.0.0.1:9464");
  EXPECT_EQ(config->drain_timeout, absl::Seconds(5));
  EXPECT_EQ(config->log_format, LogFormat::kLogfmt);
  EXPECT_EQ(config->max_streams_per_connection, 256);  // 2 * max_requests

  const hedge::EngineConfig& engine = config->engine;
  EXPECT_EQ(engine.timeout, absl::Seconds(1));
  EXPECT_EQ(engine.admission.max_requests, 128);
  EXPECT_EQ(engine.admission.max_attempts, 160);
  EXPECT_EQ(engine.max_response_bytes, 4194304);
  ASSERT_EQ(engine.upstreams.size(), 1u);
  const hedge::UpstreamConfig& upstream = engine.upstreams[0];
  EXPECT_EQ(upstream.name, "");
  ASSERT_EQ(upstream.replicas.size(), 2u);
  EXPECT_EQ(upstream.replicas[1].configured, "http://127.0.0.1:8002");
  EXPECT_EQ(upstream.hedge_delay, absl::Milliseconds(25));
  EXPECT_EQ(upstream.budget.fraction, 0.1);
  EXPECT_EQ(upstream.budget.burst, 2);
  EXPECT_EQ(upstream.retry.fraction, 0.2);
  EXPECT_EQ(upstream.retry.per_second, 10);
  EXPECT_EQ(upstream.retry.window, absl::Seconds(10));
  EXPECT_EQ(upstream.tenant_share, 1);
  EXPECT_EQ(engine.tenant_share, 1);
  EXPECT_EQ(upstream.circuit.failure_threshold, 5);
  EXPECT_EQ(upstream.circuit.cooldown, absl::Seconds(1));
  EXPECT_EQ(upstream.http_version, hedge::HttpVersion::kHttp1);
  EXPECT_EQ(upstream.ca_file, "");
  EXPECT_EQ(upstream.preconnect, 1);
  EXPECT_EQ(engine.timer_spin, absl::ZeroDuration());
}

TEST(ServerConfigTest, EveryFlagIsCarriedOver) {
  RawFlags flags = Valid();
  flags.listen = "unix:/tmp/tailgate.sock";
  flags.admin = "[::1]:0";
  flags.metrics_listen = "localhost:0";
  flags.hedge_delay = "5ms";
  flags.hedge_fraction = "0.25";
  flags.hedge_burst = "10";
  flags.timeout = "250ms";
  flags.max_requests = "7";
  flags.max_attempts = "9";
  flags.max_response_bytes = "1024";
  flags.failure_threshold = "3";
  flags.cooldown = "500ms";
  flags.drain_timeout = "0s";
  flags.backends = "https://127.0.0.1:8001,https://127.0.0.1:8002";
  flags.backend_http2 = true;
  flags.ca_file = "/dev/null";
  flags.log_format = "json";
  flags.preconnect = "4";
  flags.timer_spin = "100us";
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->listen.is_unix);
  EXPECT_EQ(config->admin.ToString(), "[::1]:0");
  EXPECT_EQ(config->metrics_listen.ToString(), "localhost:0");
  EXPECT_EQ(config->drain_timeout, absl::ZeroDuration());
  EXPECT_EQ(config->log_format, LogFormat::kJson);
  const hedge::EngineConfig& engine = config->engine;
  EXPECT_EQ(engine.timeout, absl::Milliseconds(250));
  EXPECT_EQ(engine.admission.max_requests, 7);
  EXPECT_EQ(engine.admission.max_attempts, 9);
  EXPECT_EQ(engine.max_response_bytes, 1024);
  const hedge::UpstreamConfig& upstream = engine.upstreams[0];
  EXPECT_EQ(upstream.hedge_delay, absl::Milliseconds(5));
  EXPECT_EQ(upstream.budget.fraction, 0.25);
  EXPECT_EQ(upstream.budget.burst, 10);
  EXPECT_EQ(upstream.circuit.failure_threshold, 3);
  EXPECT_EQ(upstream.circuit.cooldown, absl::Milliseconds(500));
  EXPECT_EQ(upstream.http_version, hedge::HttpVersion::kHttp2);
  EXPECT_EQ(upstream.ca_file, "/dev/null");
  EXPECT_EQ(upstream.preconnect, 4);
  EXPECT_EQ(engine.timer_spin, absl::Microseconds(100));
}

TEST(ServerConfigTest, Backends) {
  RawFlags flags = Valid();
  flags.backends = "";
  EXPECT_EQ(ErrorOf(flags),
            "--backends: required: a comma-separated list of replica URLs");
  flags.backends = "ftp://x";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--backends: "))
      << ErrorOf(flags);
  flags.backends = "http://a:1,http://a:1";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--backends: "));
}

TEST(ServerConfigTest, Addresses) {
  RawFlags flags = Valid();
  flags.listen = "127.0.0.1:65536";
  EXPECT_EQ(ErrorOf(flags),
            "--listen: port must be in [0, 65535], got \"65536\"");
  flags = Valid();
  flags.admin = "nowhere";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--admin: want host:port"));
  flags = Valid();
  flags.metrics_listen = "unix:/tmp/m.sock";
  EXPECT_EQ(ErrorOf(flags),
            "--metrics_listen: want host:port (HTTP is served over TCP)");
}

TEST(ServerConfigTest, ListenersMustNotShareAnAddressUnlessEphemeral) {
  RawFlags flags = Valid();
  flags.admin = flags.listen;
  EXPECT_EQ(ErrorOf(flags),
            "--admin: same address as --listen (127.0.0.1:8080)");
  flags = Valid();
  flags.metrics_listen = flags.admin;
  EXPECT_EQ(ErrorOf(flags),
            "--metrics_listen: same address as --admin (127.0.0.1:9090)");
  flags = Valid();
  flags.listen = flags.admin = flags.metrics_listen = "127.0.0.1:0";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
}

TEST(ServerConfigTest, HedgeDelayEdges) {
  RawFlags flags = Valid();
  flags.hedge_delay = "1ns";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.hedge_delay = "999ms";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.hedge_delay = "1s";
  EXPECT_EQ(ErrorOf(flags),
            "--hedge_delay: must be less than timeout (1s), got 1s");
  flags.hedge_delay = "0";
  EXPECT_EQ(ErrorOf(flags), "--hedge_delay: must be positive, got 0");
  flags.hedge_delay = "-5ms";
  EXPECT_EQ(ErrorOf(flags), "--hedge_delay: must be positive, got -5ms");
  flags.hedge_delay = "25";
  EXPECT_EQ(ErrorOf(flags),
            "--hedge_delay: want a duration such as 250ms or 1s, got \"25\"");
  flags.hedge_delay = "inf";
  EXPECT_TRUE(
      absl::StartsWith(ErrorOf(flags), "--hedge_delay: want a duration"));
}

TEST(ServerConfigTest, HedgeDelayAutoAndItsBounds) {
  RawFlags flags = Valid();
  flags.hedge_delay = "auto";
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  const hedge::UpstreamConfig& upstream = config->engine.upstreams[0];
  EXPECT_TRUE(upstream.adaptive_delay.enabled);
  EXPECT_EQ(upstream.adaptive_delay.min, absl::Milliseconds(1));
  EXPECT_EQ(upstream.adaptive_delay.max, absl::Milliseconds(200));

  flags.hedge_delay_min = "0";
  EXPECT_EQ(ErrorOf(flags), "--hedge_delay_min: must be positive, got 0");
  flags.hedge_delay_min = "5ms";
  flags.hedge_delay_max = "4ms";
  EXPECT_EQ(ErrorOf(flags),
            "--hedge_delay_max: must be at least hedge_delay_min (5ms), got "
            "4ms");
  flags.hedge_delay_max = "5ms";  // min == max: a fixed delay, learned
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.hedge_delay_max = "1s";
  EXPECT_EQ(ErrorOf(flags),
            "--hedge_delay_max: must be less than timeout (1s), got 1s");
  flags.hedge_delay_max = "999ms";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.hedge_delay_max = "much";
  EXPECT_EQ(ErrorOf(flags),
            "--hedge_delay_max: want a duration such as 250ms or 1s, got "
            "\"much\"");

  // Bounds are only checked when they are used.
  flags.hedge_delay = "5ms";
  flags.hedge_delay_max = "1s";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.hedge_delay = "Auto";
  EXPECT_TRUE(
      absl::StartsWith(ErrorOf(flags), "--hedge_delay: want a duration"));
}

TEST(ServerConfigTest, HedgeFractionEdges) {
  RawFlags flags = Valid();
  for (const char* ok : {"0", "1", "0.5"}) {
    flags.hedge_fraction = ok;
    EXPECT_TRUE(ConfigFromRawFlags(flags).ok()) << ok;
  }
  flags.hedge_fraction = "1.5";
  EXPECT_EQ(ErrorOf(flags), "--hedge_fraction: must be in [0, 1], got 1.5");
  for (const char* bad : {"-0.01", "1.0000001"}) {
    flags.hedge_fraction = bad;
    EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--hedge_fraction: must be"))
        << bad;
  }
  for (const char* bad : {"x", "nan", "inf", ""}) {
    flags.hedge_fraction = bad;
    EXPECT_EQ(
        ErrorOf(flags),
        absl::StrCat("--hedge_fraction: want a number, got \"", bad, "\""));
  }
}

TEST(ServerConfigTest, HedgeBurstEdges) {
  RawFlags flags = Valid();
  flags.hedge_burst = "0";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.hedge_burst = "1000000000";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.hedge_burst = "-1";
  EXPECT_EQ(ErrorOf(flags),
            "--hedge_burst: must be in [0, 1000000000], got -1");
  flags.hedge_burst = "1000000001";
  EXPECT_TRUE(absl::StartsWith(
      ErrorOf(flags), "--hedge_burst: must be in [0, 1000000000], got"));
  flags.hedge_burst = "two";
  EXPECT_EQ(ErrorOf(flags), "--hedge_burst: want a number, got \"two\"");
}

TEST(ServerConfigTest, RetryBudgetEdges) {
  RawFlags flags = Valid();
  flags.retry_fraction = "0";
  flags.retry_per_second = "0";
  flags.retry_window = "100ms";
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->engine.upstreams[0].retry.window, absl::Milliseconds(100));
  flags.retry_fraction = "1";
  flags.retry_per_second = "1000000";
  flags.retry_window = "1h";
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->engine.upstreams[0].retry.fraction, 1);
  EXPECT_EQ(config->engine.upstreams[0].retry.per_second, 1e6);

  flags = Valid();
  flags.retry_fraction = "1.01";
  EXPECT_EQ(ErrorOf(flags), "--retry_fraction: must be in [0, 1], got 1.01");
  flags = Valid();
  flags.retry_per_second = "1000001";
  EXPECT_EQ(ErrorOf(flags),
            "--retry_per_second: must be in [0, 1000000], got 1000001");
  flags = Valid();
  flags.retry_window = "99ms";
  EXPECT_EQ(ErrorOf(flags), "--retry_window: must be in [100ms, 1h], got 99ms");
  flags = Valid();
  flags.retry_window = "soon";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--retry_window: "));
}

TEST(ServerConfigTest, TenantShareEdges) {
  RawFlags flags = Valid();
  flags.tenant_share = "0.001";
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->engine.tenant_share, 0.001);
  EXPECT_EQ(config->engine.upstreams[0].tenant_share, 0.001);
  for (const char* bad : {"0", "-0.5", "1.5", "1.0000001"}) {
    flags.tenant_share = bad;
    EXPECT_TRUE(absl::StartsWith(ErrorOf(flags),
                                 "--tenant_share: must be in (0, 1], got"))
        << bad;
  }
  flags.tenant_share = "1.0000001";
  EXPECT_EQ(ErrorOf(flags), "--tenant_share: must be in (0, 1], got 1.0000001");
  flags.tenant_share = "nan";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--tenant_share: "));
  flags.tenant_share = "half";
  EXPECT_EQ(ErrorOf(flags), "--tenant_share: want a number, got \"half\"");
}

TEST(ServerConfigTest, TimeoutEdges) {
  RawFlags flags = Valid();
  flags.hedge_delay = "1ms";
  flags.timeout = "2ms";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.timeout = "0s";
  EXPECT_EQ(ErrorOf(flags), "--timeout: must be positive and finite, got 0");
  flags.timeout = "soon";
  EXPECT_EQ(ErrorOf(flags),
            "--timeout: want a duration such as 250ms or 1s, got \"soon\"");
}

TEST(ServerConfigTest, AdmissionLimitEdges) {
  RawFlags flags = Valid();
  flags.max_requests = "1";
  flags.max_attempts = "1";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.max_requests = "1000000";
  flags.max_attempts = "1000000";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.max_requests = "0";
  EXPECT_EQ(ErrorOf(flags), "--max_requests: must be in [1, 1000000], got 0");
  flags = Valid();
  flags.max_attempts = "1000001";
  EXPECT_EQ(ErrorOf(flags),
            "--max_attempts: must be in [1, 1000000], got 1000001");
  flags.max_attempts = "1.5";
  EXPECT_EQ(ErrorOf(flags), "--max_attempts: want an integer, got \"1.5\"");
  flags.max_attempts = "99999999999999999999";
  EXPECT_EQ(ErrorOf(flags),
            "--max_attempts: want an integer, got \"99999999999999999999\"");
}

TEST(ServerConfigTest, MaxStreamsPerConnectionEdges) {
  RawFlags flags = Valid();
  flags.max_requests = "40";
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_streams_per_connection, 80);  // 2 * max_requests
  flags.max_streams_per_connection = "1";
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_streams_per_connection, 1);
  flags.max_streams_per_connection = "2147483647";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.max_streams_per_connection = "0";
  EXPECT_EQ(ErrorOf(flags),
            "--max_streams_per_connection: must be in [1, 2147483647], got 0");
  flags.max_streams_per_connection = "2147483648";
  EXPECT_EQ(ErrorOf(flags),
            "--max_streams_per_connection: must be in [1, 2147483647], got "
            "2147483648");
  flags.max_streams_per_connection = "many";
  EXPECT_EQ(ErrorOf(flags),
            "--max_streams_per_connection: want an integer, got \"many\"");
}

TEST(ServerConfigTest, PreconnectEdges) {
  RawFlags flags = Valid();
  for (const char* ok : {"0", "16"}) {
    flags.preconnect = ok;
    absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(flags);
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(absl::StrCat(config->engine.upstreams[0].preconnect), ok);
  }
  flags.preconnect = "17";
  EXPECT_EQ(ErrorOf(flags), "--preconnect: must be in [0, 16], got 17");
  flags.preconnect = "-1";
  EXPECT_EQ(ErrorOf(flags), "--preconnect: must be in [0, 16], got -1");
  flags.preconnect = "some";
  EXPECT_EQ(ErrorOf(flags), "--preconnect: want an integer, got \"some\"");
}

TEST(ServerConfigTest, TimerSpinEdges) {
  RawFlags flags = Valid();
  flags.timer_spin = "1ms";
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->engine.timer_spin, absl::Milliseconds(1));
  flags.timer_spin = "1000001ns";
  EXPECT_EQ(ErrorOf(flags),
            "--timer_spin: must be in [0, 1ms], got 1.000001ms");
  flags.timer_spin = "-1us";
  EXPECT_EQ(ErrorOf(flags), "--timer_spin: must be in [0, 1ms], got -1us");
}

TEST(ServerConfigTest, MaxResponseBytesEdges) {
  RawFlags flags = Valid();
  flags.max_response_bytes = "1";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.max_response_bytes = "67108864";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.max_response_bytes = "67108865";
  EXPECT_EQ(ErrorOf(flags),
            "--max_response_bytes: must be in [1, 67108864] (64 MiB), got "
            "67108865");
  flags.max_response_bytes = "0";
  EXPECT_EQ(ErrorOf(flags),
            "--max_response_bytes: must be in [1, 67108864] (64 MiB), got 0");
  flags.max_response_bytes = "4MiB";
  EXPECT_EQ(ErrorOf(flags),
            "--max_response_bytes: want an integer, got \"4MiB\"");
}

TEST(ServerConfigTest, CircuitEdges) {
  RawFlags flags = Valid();
  flags.failure_threshold = "1";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.failure_threshold = "0";
  EXPECT_EQ(ErrorOf(flags), "--failure_threshold: must be at least 1, got 0");
  flags.failure_threshold = "2147483648";
  EXPECT_EQ(ErrorOf(flags),
            "--failure_threshold: must be at most 2147483647, got 2147483648");
  flags = Valid();
  flags.cooldown = "1ms";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.cooldown = "0s";
  EXPECT_EQ(ErrorOf(flags), "--cooldown: must be positive and finite, got 0");
  flags.cooldown = "1";
  EXPECT_EQ(ErrorOf(flags),
            "--cooldown: want a duration such as 250ms or 1s, got \"1\"");
}

TEST(ServerConfigTest, DrainTimeoutEdges) {
  RawFlags flags = Valid();
  flags.drain_timeout = "0s";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());
  flags.drain_timeout = "-1s";
  EXPECT_EQ(ErrorOf(flags), "--drain_timeout: must not be negative, got -1s");
}

TEST(ServerConfigTest, CaFileMustBeReadable) {
  RawFlags flags = Valid();
  flags.ca_file = "/nonexistent/ca.pem";
  EXPECT_EQ(ErrorOf(flags), "--ca_file: cannot read \"/nonexistent/ca.pem\"");
}

TEST(ServerConfigTest, CpusNameCpusTheProcessMayUse) {
  absl::StatusOr<ServerConfig> unpinned = ConfigFromRawFlags(Valid());
  ASSERT_TRUE(unpinned.ok()) << unpinned.status();
  EXPECT_TRUE(unpinned->cpus.empty());  // the default, any

  absl::StatusOr<std::vector<int>> allowed = AllowedCpus();
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  RawFlags flags = Valid();
  flags.cpus = "last";
  absl::StatusOr<ServerConfig> last = ConfigFromRawFlags(flags);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->cpus, std::vector<int>{allowed->back()});
  flags.cpus = FormatCpuList(*allowed);
  absl::StatusOr<ServerConfig> all = ConfigFromRawFlags(flags);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->cpus, *allowed);

  // The highest CPU number there is: never one this machine lets us use.
  flags.cpus = std::to_string(kMaxCpus - 1);
  EXPECT_EQ(ErrorOf(flags), absl::StrCat("--cpus: CPU ", kMaxCpus - 1,
                                         " is not one this process may use (",
                                         FormatCpuList(*allowed), ")"));
  flags.cpus = "1-0";
  EXPECT_EQ(ErrorOf(flags),
            "--cpus: want any, last or CPUs such as 1 or 0-1,3: the range "
            "\"1-0\" runs backwards");
}

TEST(ServerConfigTest, SchedPolicyNormalByDefaultOrBatch) {
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(Valid());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sched_policy, SchedPolicy::kNormal);
  RawFlags flags = Valid();
  flags.sched_policy = "batch";
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sched_policy, SchedPolicy::kBatch);
  flags.sched_policy = "fifo";
  EXPECT_EQ(ErrorOf(flags),
            "--sched_policy: must be batch or normal, got \"fifo\"");
}

TEST(ServerConfigTest, LogFormat) {
  RawFlags flags = Valid();
  flags.log_format = "text";
  EXPECT_EQ(ErrorOf(flags), "--log_format: want logfmt or json, got \"text\"");
}

TEST(ServerConfigTest, EngineFieldErrorsNameTheirFlag) {
  EXPECT_EQ(
      ForFlagOfField(hedge::FieldError("http_version", "needs h2c")).message(),
      "--backend_http2: needs h2c");
  EXPECT_EQ(ForFlagOfField(hedge::FieldError("replicas", "none")).message(),
            "--backends: none");
  // A field no flag sets, and an error that names no field, stay as they are.
  EXPECT_EQ(
      ForFlagOfField(hedge::FieldError("max_response_headers", "x")).message(),
      "max_response_headers: x");
  EXPECT_EQ(ForFlagOfField(absl::UnavailableError("down")),
            absl::UnavailableError("down"));
}

TEST(ServerConfigTest, ReportsTheFirstBadFlagOnly) {
  RawFlags flags = Valid();
  flags.hedge_fraction = "2";
  flags.max_requests = "0";
  // The engine checks its own limits before each upstream's policy.
  EXPECT_EQ(ErrorOf(flags), "--max_requests: must be in [1, 1000000], got 0");
  // A value that does not parse is reported before any range.
  flags.timeout = "soon";
  EXPECT_EQ(ErrorOf(flags),
            "--timeout: want a duration such as 250ms or 1s, got \"soon\"");
}

TEST(ServerConfigTest, ConfigFromFlagsReadsTheCommandLineFlags) {
  absl::SetFlag(&FLAGS_backends, "https://127.0.0.1:1");
  absl::SetFlag(&FLAGS_hedge_delay, "7ms");
  absl::SetFlag(&FLAGS_backend_http2, true);
  absl::StatusOr<ServerConfig> config = ConfigFromFlags();
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->engine.upstreams[0].hedge_delay, absl::Milliseconds(7));
  EXPECT_EQ(config->engine.upstreams[0].http_version,
            hedge::HttpVersion::kHttp2);
  absl::SetFlag(&FLAGS_hedge_delay, "7");
  EXPECT_EQ(ConfigFromFlags().status().message(),
            "--hedge_delay: want a duration such as 250ms or 1s, got \"7\"");
}

}  // namespace
}  // namespace tailgate::server

namespace tailgate::server {
namespace {

TEST(ServerConfigTest, HttpDoorFlags) {
  absl::StatusOr<ServerConfig> off = ConfigFromRawFlags(Valid());
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->http_listen.has_value());
  EXPECT_EQ(off->http_max_connections, 1024);
  EXPECT_EQ(off->http_header_timeout, absl::Seconds(10));

  RawFlags flags = Valid();
  flags.http_listen = "unix:/run/tailgate/http.sock";
  flags.http_max_connections = "2";
  flags.http_header_timeout = "250ms";
  absl::StatusOr<ServerConfig> on = ConfigFromRawFlags(flags);
  ASSERT_TRUE(on.ok()) << on.status();
  ASSERT_TRUE(on->http_listen.has_value());
  EXPECT_EQ(on->http_listen->ToString(), "unix:/run/tailgate/http.sock");
  EXPECT_EQ(on->http_max_connections, 2);
  EXPECT_EQ(on->http_header_timeout, absl::Milliseconds(250));

  flags = Valid();
  flags.http_listen = "127.0.0.1:8080";
  EXPECT_EQ(ErrorOf(flags),
            "--http_listen: same address as --listen (127.0.0.1:8080)");
  flags = Valid();
  flags.http_max_connections = "0";
  EXPECT_TRUE(absl::StartsWith(ErrorOf(flags), "--http_max_connections: "));
  flags = Valid();
  flags.http_header_timeout = "0s";
  EXPECT_EQ(ErrorOf(flags), "--http_header_timeout: must be positive, got 0s");
}

}  // namespace
}  // namespace tailgate::server

namespace tailgate::server {
namespace {

TEST(ServerConfigTest, ListenFrontIsTheLoopUnlessGrpcIsAsked) {
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(Valid());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->listen_front, ListenFront::kLoop);
  RawFlags flags = Valid();
  flags.listen_front = "grpc";
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->listen_front, ListenFront::kGrpc);
  flags.listen_front = "Loop";
  EXPECT_EQ(ErrorOf(flags), "--listen_front: want loop or grpc, got \"Loop\"");
}

TEST(ServerConfigTest, UnixSocketModeReachesEveryUnixListener) {
  absl::StatusOr<ServerConfig> config = ConfigFromRawFlags(Valid());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->unix_socket_mode, 0660);

  RawFlags flags = Valid();
  flags.listen = "unix:/run/tailgate/read.sock";
  flags.admin = "unix:/run/tailgate/admin.sock";
  flags.http_listen = "unix:/run/tailgate/http.sock";
  flags.read_listen = "unix:/run/tailgate/door.sock";
  flags.unix_socket_mode = "0600";
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->unix_socket_mode, 0600);
  EXPECT_EQ(config->listen.unix_mode, 0600);
  EXPECT_EQ(config->admin.unix_mode, 0600);
  EXPECT_EQ(config->http_listen->unix_mode, 0600);
  EXPECT_EQ(config->read_listen->unix_mode, 0600);

  flags.unix_socket_mode = "660";
  config = ConfigFromRawFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->listen.unix_mode, 0660);

  flags.unix_socket_mode = "u=rw,g=rw";
  EXPECT_EQ(ErrorOf(flags),
            "--unix_socket_mode: want permission bits in octal (e.g. 0660), "
            "got \"u=rw,g=rw\"");
  flags.unix_socket_mode = "1777";
  EXPECT_EQ(ErrorOf(flags),
            "--unix_socket_mode: must be at most 0777 (no setuid, setgid or "
            "sticky bit), got \"1777\"");
  flags.unix_socket_mode = "0066";
  EXPECT_EQ(ErrorOf(flags),
            "--unix_socket_mode: must give the owner read and write (0600 to "
            "0777), got \"0066\"");
}

TEST(ServerConfigTest, ReadDoorFlags) {
  absl::StatusOr<ServerConfig> off = ConfigFromRawFlags(Valid());
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->read_listen.has_value());

  RawFlags flags = Valid();
  flags.read_listen = "unix:/run/tailgate/read.sock";
  absl::StatusOr<ServerConfig> on = ConfigFromRawFlags(flags);
  ASSERT_TRUE(on.ok()) << on.status();
  ASSERT_TRUE(on->read_listen.has_value());
  EXPECT_EQ(on->read_listen->ToString(), "unix:/run/tailgate/read.sock");
  flags.read_listen = "[::1]:7443";
  on = ConfigFromRawFlags(flags);
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_EQ(on->read_listen->ToString(), "[::1]:7443");

  // Distinct from every other listener, the error naming the flag.
  flags = Valid();
  flags.read_listen = "127.0.0.1:8080";
  EXPECT_EQ(ErrorOf(flags),
            "--read_listen: same address as --listen (127.0.0.1:8080)");
  flags.read_listen = "127.0.0.1:9090";
  EXPECT_EQ(ErrorOf(flags),
            "--read_listen: same address as --admin (127.0.0.1:9090)");
  flags.read_listen = "127.0.0.1:9464";
  EXPECT_EQ(ErrorOf(flags),
            "--read_listen: same address as --metrics_listen (127.0.0.1:9464)");
  flags.http_listen = flags.read_listen = "127.0.0.1:7000";
  EXPECT_EQ(ErrorOf(flags),
            "--read_listen: same address as --http_listen (127.0.0.1:7000)");
  flags = Valid();
  flags.listen = flags.read_listen = "unix:/run/tailgate/grpc.sock";
  EXPECT_EQ(ErrorOf(flags),
            "--read_listen: same address as --listen "
            "(unix:/run/tailgate/grpc.sock)");
  // Port 0 twice is two ports.
  flags = Valid();
  flags.listen = flags.read_listen = flags.http_listen = "127.0.0.1:0";
  EXPECT_TRUE(ConfigFromRawFlags(flags).ok());

  flags = Valid();
  flags.read_listen = "127.0.0.1:65536";
  EXPECT_EQ(ErrorOf(flags),
            "--read_listen: port must be in [0, 65535], got \"65536\"");
}

}  // namespace
}  // namespace tailgate::server
