#include "server/config/config_file.h"

#include <fstream>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "server/config/config_load.h"
#include "tailgate/v1/config.pb.h"

namespace tailgate::server {
namespace {

constexpr char kPath[] = "sidecar.textproto";

constexpr char kGood[] = R"pb(
  listen: "127.0.0.1:7080"
  timeout: "2s"
  max_requests: 64
  upstreams {
    name: ""
    replicas: "http://127.0.0.1:8001"
    replicas: "http://127.0.0.1:8002"
  }
  upstreams {
    name: "profiles"
    replicas: "http://127.0.0.1:8101"
    replicas: "http://127.0.0.1:8102"
    hedge_delay: "10ms"
    hedge_fraction: 0.05
    hedge_burst: 4
    failure_threshold: 3
    cooldown: "250ms"
    preconnect: 2
    retry_fraction: 0.5
    retry_per_second: 2
    retry_window: "30s"
    tenant_share: 0.25
    coalesce: true
  }
  tenant_share: 0.5
)pb";

// Only the flags in `given` were on the command line.
OnCommandLine Given(absl::flat_hash_set<std::string> given = {}) {
  return [given](absl::string_view name) { return given.contains(name); };
}

absl::StatusOr<ServerConfig> Load(absl::string_view text,
                                  RawFlags flags = RawFlags(),
                                  const OnCommandLine& given = Given()) {
  absl::StatusOr<RawFlags> merged =
      ApplyConfigText(kPath, text, std::move(flags), given);
  if (!merged.ok()) return merged.status();
  return ConfigFromRawFlags(*merged);
}

// The one-line INVALID_ARGUMENT that `text` gets.
std::string ErrorOf(absl::string_view text, RawFlags flags = RawFlags(),
                    const OnCommandLine& given = Given()) {
  absl::StatusOr<ServerConfig> config = Load(text, std::move(flags), given);
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument)
      << config.status();
  const std::string message(config.status().message());
  EXPECT_FALSE(absl::StrContains(message, "\n")) << message;
  return message;
}

TEST(ConfigFileTest, GoodFileSetsGlobalsAndEachUpstreamsPolicy) {
  absl::StatusOr<ServerConfig> config = Load(kGood);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->listen.ToString(), "127.0.0.1:7080");
  EXPECT_EQ(config->admin.ToString(), "127.0.0.1:9090");  // the flag's
  EXPECT_EQ(config->engine.timeout, absl::Seconds(2));
  EXPECT_EQ(config->engine.admission.max_requests, 64);
  EXPECT_EQ(config->max_streams_per_connection, 128);  // 2 * max_requests
  ASSERT_EQ(config->engine.upstreams.size(), 2u);

  const hedge::UpstreamConfig& fallback = config->engine.upstreams[0];
  EXPECT_EQ(fallback.name, "");
  ASSERT_EQ(fallback.replicas.size(), 2u);
  EXPECT_EQ(fallback.replicas[1].configured, "http://127.0.0.1:8002");
  // Left out: the flags' defaults.
  EXPECT_EQ(fallback.hedge_delay, absl::Milliseconds(25));
  EXPECT_EQ(fallback.budget.fraction, 0.1);
  EXPECT_EQ(fallback.preconnect, 1);

  const hedge::UpstreamConfig& profiles = config->engine.upstreams[1];
  EXPECT_EQ(profiles.name, "profiles");
  ASSERT_EQ(profiles.replicas.size(), 2u);
  EXPECT_EQ(profiles.replicas[0].configured, "http://127.0.0.1:8101");
  EXPECT_EQ(profiles.hedge_delay, absl::Milliseconds(10));
  EXPECT_EQ(profiles.budget.fraction, 0.05);
  EXPECT_EQ(profiles.budget.burst, 4);
  EXPECT_EQ(profiles.circuit.failure_threshold, 3);
  EXPECT_EQ(profiles.circuit.cooldown, absl::Milliseconds(250));
  EXPECT_EQ(profiles.preconnect, 2);
  EXPECT_EQ(profiles.retry.fraction, 0.5);
  EXPECT_EQ(profiles.retry.per_second, 2);
  EXPECT_EQ(profiles.retry.window, absl::Seconds(30));
  EXPECT_EQ(profiles.tenant_share, 0.25);
  EXPECT_TRUE(profiles.coalesce);
  EXPECT_FALSE(fallback.coalesce);  // off by default
  // The file's global share: admission, and the default set's hedges.
  EXPECT_EQ(config->engine.tenant_share, 0.5);
  EXPECT_EQ(fallback.tenant_share, 0.5);
  EXPECT_EQ(fallback.retry.fraction, 0.2);  // the flag's default
}

TEST(ConfigFileTest, BadRetryAndTenantFieldsNameTheirPlace) {
  EXPECT_EQ(ErrorOf("upstreams {\n  name: \"a\"\n  replicas: "
                    "\"http://127.0.0.1:1\"\n  retry_window: \"50ms\"\n}\n"),
            "sidecar.textproto:4:3: upstreams.a.retry_window: must be in "
            "[100ms, 1h], got 50ms");
  EXPECT_EQ(ErrorOf("upstreams {\n  name: \"a\"\n  replicas: "
                    "\"http://127.0.0.1:1\"\n  tenant_share: 0\n}\n"),
            "sidecar.textproto:4:3: upstreams.a.tenant_share: must be in "
            "(0, 1], got 0");
}

TEST(ConfigFileTest, UnixSocketModeIsAGlobalOfTheFile) {
  absl::StatusOr<ServerConfig> config = Load(
      "listen: \"unix:/run/tailgate/read.sock\"\n"
      "unix_socket_mode: \"0666\"\n"
      "upstreams {\n  replicas: \"http://127.0.0.1:1\"\n}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->listen.unix_mode, 0666);
  EXPECT_EQ(ErrorOf("unix_socket_mode: \"0999\"\n"
                    "upstreams {\n  replicas: \"http://127.0.0.1:1\"\n}\n"),
            "sidecar.textproto:1:1: unix_socket_mode: want permission bits in "
            "octal (e.g. 0660), got \"0999\"");
}

TEST(ConfigFileTest, TheExampleInDocsIsValid) {
  std::ifstream in("docs/sidecar.textproto");
  ASSERT_TRUE(in.is_open());
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  absl::StatusOr<ServerConfig> config = Load(text);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_GE(config->engine.upstreams.size(), 2u);
}

TEST(ConfigFileTest, FlagsOnTheCommandLineOverrideTheFilesGlobals) {
  RawFlags flags;
  flags.timeout = "500ms";
  flags.listen = "127.0.0.1:6080";
  // --timeout was given; --listen holds a value that was not (a default).
  absl::StatusOr<ServerConfig> config = Load(kGood, flags, Given({"timeout"}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->engine.timeout, absl::Milliseconds(500));
  EXPECT_EQ(config->listen.ToString(), "127.0.0.1:7080");
  EXPECT_EQ(config->engine.admission.max_requests, 64);
}

TEST(ConfigFileTest, PolicyFlagsAreDefaultsAnUpstreamsOwnValueBeats) {
  RawFlags flags;
  flags.hedge_delay = "40ms";
  flags.failure_threshold = "9";
  absl::StatusOr<ServerConfig> config =
      Load(kGood, flags, Given({"hedge_delay", "failure_threshold"}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->engine.upstreams[0].hedge_delay, absl::Milliseconds(40));
  EXPECT_EQ(config->engine.upstreams[0].circuit.failure_threshold, 9);
  EXPECT_EQ(config->engine.upstreams[1].hedge_delay, absl::Milliseconds(10));
  EXPECT_EQ(config->engine.upstreams[1].circuit.failure_threshold, 3);
}

TEST(ConfigFileTest, BackendsOnTheCommandLineReplaceTheDefaultSetsReplicas) {
  RawFlags flags;
  flags.backends = "http://127.0.0.1:9001";
  absl::StatusOr<ServerConfig> config = Load(kGood, flags, Given({"backends"}));
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->engine.upstreams.size(), 2u);
  ASSERT_EQ(config->engine.upstreams[0].replicas.size(), 1u);
  EXPECT_EQ(config->engine.upstreams[0].replicas[0].configured,
            "http://127.0.0.1:9001");
  EXPECT_EQ(config->engine.upstreams[1].replicas.size(), 2u);
}

TEST(ConfigFileTest, BackendsAddTheDefaultSetToAFileWithoutOne) {
  RawFlags flags;
  flags.backends = "http://127.0.0.1:9001";
  absl::StatusOr<ServerConfig> config =
      Load(R"pb(upstreams { name: "a" replicas: "http://127.0.0.1:8001" })pb",
           flags, Given({"backends"}));
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->engine.upstreams.size(), 2u);
  EXPECT_EQ(config->engine.upstreams[0].name, "");
  EXPECT_EQ(config->engine.upstreams[1].name, "a");
}

TEST(ConfigFileTest, AFileWithoutADefaultSetNeedsNone) {
  absl::StatusOr<ServerConfig> config =
      Load(R"pb(upstreams { name: "a" replicas: "http://127.0.0.1:8001" })pb");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->engine.upstreams.size(), 1u);
  EXPECT_EQ(config->engine.upstreams[0].name, "a");
}

TEST(ConfigFileTest, SyntaxErrorNamesFileLineAndColumn) {
  EXPECT_TRUE(absl::StartsWith(ErrorOf("timeout: \"1s\"\nupstreams {\n  name "
                                       "\"a\"\n"),
                               "sidecar.textproto:3:8: "))
      << ErrorOf("timeout: \"1s\"\nupstreams {\n  name \"a\"\n");
}

TEST(ConfigFileTest, UnknownFieldNamesFileLineColumnAndField) {
  const std::string error =
      ErrorOf("upstreams {\n  name: \"a\"\n  delay: \"5ms\"\n}\n");
  EXPECT_TRUE(absl::StartsWith(error, "sidecar.textproto:3:8: ")) << error;
  EXPECT_TRUE(absl::StrContains(error, "\"delay\"")) << error;
}

TEST(ConfigFileTest, WrongTypeNamesFileLineAndColumn) {
  const std::string error = ErrorOf("max_requests: \"many\"\n");
  EXPECT_TRUE(absl::StartsWith(error, "sidecar.textproto:1:15: ")) << error;
}

TEST(ConfigFileTest, BadDurationNamesItsPlaceAndField) {
  EXPECT_EQ(ErrorOf("upstreams {\n  name: \"a\"\n  replicas: "
                    "\"http://127.0.0.1:1\"\n  hedge_delay: \"5\"\n}\n"),
            "sidecar.textproto:4:3: upstreams.a.hedge_delay: want a duration "
            "such as 250ms or 1s, got \"5\"");
}

TEST(ConfigFileTest, EngineValidationErrorNamesItsPlaceAndField) {
  EXPECT_EQ(ErrorOf("upstreams {\n  name: \"a\"\n  replicas: "
                    "\"http://127.0.0.1:1\"\n  hedge_fraction: 1.5\n}\n"),
            "sidecar.textproto:4:3: upstreams.a.hedge_fraction: must be in "
            "[0, 1], got 1.5");
  EXPECT_EQ(ErrorOf("max_requests: 0\nupstreams {\n  replicas: "
                    "\"http://127.0.0.1:1\"\n}\n"),
            "sidecar.textproto:1:1: max_requests: must be in [1, 1000000], "
            "got 0");
  // The default set's fields carry no prefix.
  EXPECT_EQ(ErrorOf("upstreams {\n  replicas: \"http://127.0.0.1:1\"\n  "
                    "failure_threshold: 0\n}\n"),
            "sidecar.textproto:3:3: failure_threshold: must be at least 1, "
            "got 0");
}

TEST(ConfigFileTest, AFlagsDefaultThatFailsInAnUpstreamNamesBoth) {
  RawFlags flags;
  flags.hedge_delay = "2s";  // longer than the file's timeout
  EXPECT_EQ(ErrorOf("timeout: \"1s\"\nupstreams {\n  name: \"a\"\n  "
                    "replicas: \"http://127.0.0.1:1\"\n}\n",
                    flags, Given({"hedge_delay"})),
            "sidecar.textproto:2:1: upstreams.a.hedge_delay (from "
            "--hedge_delay): must be less than timeout (1s), got 2s");
}

TEST(ConfigFileTest, AnUpstreamMayLearnItsHedgeDelay) {
  absl::StatusOr<ServerConfig> config = Load(
      "upstreams {\n  name: \"a\"\n  replicas: \"http://127.0.0.1:1\"\n"
      "  hedge_delay: \"auto\"\n  hedge_delay_min: \"2ms\"\n"
      "  hedge_delay_max: \"50ms\"\n}\n"
      "upstreams {\n  name: \"b\"\n  replicas: \"http://127.0.0.1:2\"\n}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  const hedge::UpstreamConfig& a = config->engine.upstreams[0];
  EXPECT_TRUE(a.adaptive_delay.enabled);
  EXPECT_EQ(a.adaptive_delay.min, absl::Milliseconds(2));
  EXPECT_EQ(a.adaptive_delay.max, absl::Milliseconds(50));
  EXPECT_FALSE(config->engine.upstreams[1].adaptive_delay.enabled);

  // --hedge_delay=auto is the default of sets without their own; a set's
  // own duration beats it.
  RawFlags flags;
  flags.hedge_delay = "auto";
  config = Load(
      "upstreams {\n  name: \"a\"\n  replicas: "
      "\"http://127.0.0.1:1\"\n  hedge_delay: \"7ms\"\n}\n"
      "upstreams {\n  name: \"b\"\n  replicas: "
      "\"http://127.0.0.1:2\"\n}\n",
      flags, Given({"hedge_delay"}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->engine.upstreams[0].adaptive_delay.enabled);
  EXPECT_EQ(config->engine.upstreams[0].hedge_delay, absl::Milliseconds(7));
  EXPECT_TRUE(config->engine.upstreams[1].adaptive_delay.enabled);
}

TEST(ConfigFileTest, BadAdaptiveBoundNamesItsPlaceAndField) {
  EXPECT_EQ(ErrorOf("upstreams {\n  name: \"a\"\n  replicas: "
                    "\"http://127.0.0.1:1\"\n  hedge_delay: \"auto\"\n"
                    "  hedge_delay_max: \"2s\"\n}\n"),
            "sidecar.textproto:5:3: upstreams.a.hedge_delay_max: must be less "
            "than timeout (1s), got 2s");
}

TEST(ConfigFileTest, BadReplicaNamesItsEntry) {
  const std::string error = ErrorOf(
      "upstreams {\n  name: \"a\"\n  replicas: "
      "\"http://127.0.0.1:1\"\n  replicas: \"ftp://x\"\n}\n");
  EXPECT_TRUE(
      absl::StartsWith(error, "sidecar.textproto:4:3: upstreams.a.replicas: "))
      << error;
  EXPECT_TRUE(absl::StrContains(error, "ftp")) << error;
}

TEST(ConfigFileTest, UpstreamWithoutReplicasIsAnError) {
  EXPECT_EQ(ErrorOf("upstreams {\n  name: \"a\"\n}\n"),
            "sidecar.textproto:1:1: upstreams.a.replicas: no replica "
            "configured");
}

TEST(ConfigFileTest, DuplicateAndBadNamesAreErrors) {
  EXPECT_EQ(ErrorOf("upstreams { name: \"a\" replicas: \"http://h:1\" }\n"
                    "upstreams { name: \"a\" replicas: \"http://h:2\" }\n"),
            "sidecar.textproto:2:13: upstreams: duplicate name \"a\"");
  EXPECT_EQ(ErrorOf("upstreams { replicas: \"http://h:1\" }\n"
                    "upstreams { replicas: \"http://h:2\" }\n"),
            "sidecar.textproto:2:1: upstreams: duplicate name \"\"");
  EXPECT_EQ(ErrorOf("upstreams { name: \"a.b\" replicas: \"http://h:1\" }\n"),
            "sidecar.textproto:1:13: name: want letters, digits, _ and -, got "
            "\"a.b\"");
}

TEST(ConfigFileTest, NoUpstreamAndNoBackendsIsAnError) {
  RawFlags flags;
  flags.config = kPath;
  EXPECT_EQ(ErrorOf("timeout: \"1s\"\n", flags),
            "--config: \"sidecar.textproto\" has no upstreams, and no "
            "--backends is given");
}

TEST(ConfigFileTest, UnreadableFileIsAnError) {
  RawFlags flags;
  flags.config = "/nonexistent/sidecar.textproto";
  absl::StatusOr<LoadedConfig> loaded = LoadConfig(flags, Given());
  EXPECT_EQ(loaded.status().message(),
            "--config: cannot read \"/nonexistent/sidecar.textproto\"");
}

TEST(ConfigFileTest, WithoutConfigTheFlagsAreUntouched) {
  RawFlags flags;
  flags.backends = "http://127.0.0.1:1";
  absl::StatusOr<LoadedConfig> loaded = LoadConfig(flags, Given());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->merged.upstreams.empty());
  EXPECT_TRUE(loaded->merged.file_locations.empty());
  EXPECT_EQ(loaded->file_text, "");
  ASSERT_EQ(loaded->config.engine.upstreams.size(), 1u);
}

// The file's numbers are taken as typed and checked against the bounds
// the schema declares, with the error at their place in the file.
TEST(ConfigFileTest, TypedNumbersAreCheckedAtTheirPlace) {
  RawFlags flags;
  flags.config = kPath;
  flags.backends = "http://127.0.0.1:1";
  absl::StatusOr<LoadedConfig> loaded = LoadConfigText(
      flags, Given(), "max_buffered_bytes: 268435456\nmax_connections: 7\n");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->config.max_buffered_bytes, int64_t{268435456});
  EXPECT_EQ(loaded->config.max_connections, 7);
  EXPECT_EQ(*loaded->merged.max_connections.integer(), 7);

  loaded = LoadConfigText(flags, Given(), "\n  max_connections: 0\n");
  EXPECT_EQ(loaded.status().message(),
            "sidecar.textproto:2:3: max_connections: must be in [1, 1000000], "
            "got 0");
  loaded = LoadConfigText(flags, Given(), "tenant_share: inf\n");
  EXPECT_EQ(loaded.status().message(),
            "sidecar.textproto:1:1: tenant_share: want a number, got \"inf\"");
}

// Each global setting of the file is named like the flag it stands for.
TEST(ConfigFileTest, EveryGlobalFieldIsAFlag) {
  const google::protobuf::Descriptor& type = *v1::SidecarConfig::descriptor();
  for (int i = 0; i < type.field_count(); ++i) {
    const std::string& name = type.field(i)->name();
    if (name == "upstreams") continue;
    EXPECT_NE(absl::FindCommandLineFlag(name), nullptr) << name;
    // And the loader takes it: a bad value is reported at its place.
    const std::string text =
        type.field(i)->cpp_type() ==
                google::protobuf::FieldDescriptor::CPPTYPE_STRING
            ? name + ": \"bad value\"\n"
            : name + ": -7\n";
    const std::string error =
        ErrorOf(text + "upstreams { replicas: \"http://h:1\" }\n");
    EXPECT_TRUE(absl::StartsWith(error, "sidecar.textproto:1:1: " + name))
        << error;
  }
}

TEST(FlagsNamedInTest, NamesEachSpellingUpToTheEndOfFlags) {
  std::vector<std::string> args = {
      "tailgate",          "--timeout=2s", "-listen",         "127.0.0.1:1",
      "--nobackend_http2", "--",           "--max_requests=3"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  const OnCommandLine named =
      FlagsNamedIn(static_cast<int>(argv.size()), argv.data());
  EXPECT_TRUE(named("timeout"));
  EXPECT_TRUE(named("listen"));
  EXPECT_TRUE(named("backend_http2"));
  EXPECT_FALSE(named("max_requests"));  // after "--": not a flag
  EXPECT_FALSE(named("admin"));
}

TEST(ConfigFileTest, UpstreamLimitsAndDiscoveryFieldsAreRead) {
  absl::StatusOr<ServerConfig> config = Load(
      "upstreams {\n  name: \"a\"\n  replicas: \"http://catalog.test:80\"\n"
      "  resolve: true\n  refresh_interval: \"250ms\"\n  timeout: \"500ms\"\n"
      "  max_response_bytes: 1024\n  max_requests: 8\n}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  const hedge::UpstreamConfig& a = config->engine.upstreams[0];
  EXPECT_TRUE(a.replicas[0].resolve);
  EXPECT_EQ(a.refresh_interval, absl::Milliseconds(250));
  EXPECT_EQ(a.timeout, absl::Milliseconds(500));
  EXPECT_EQ(a.max_response_bytes, 1024);
  EXPECT_EQ(a.max_requests, 8);
}

// The read door's listener, like the other listeners: the file's field is
// the flag, a flag on the command line beats it, and a clash names its
// place in the file.
TEST(ConfigFileTest, ReadListenIsTheReadDoorsAddress) {
  constexpr char kUpstream[] = "upstreams { replicas: \"http://h:1\" }\n";
  absl::StatusOr<ServerConfig> config =
      Load(std::string("read_listen: \"127.0.0.1:7443\"\n") + kUpstream);
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(config->read_listen.has_value());
  EXPECT_EQ(config->read_listen->ToString(), "127.0.0.1:7443");

  RawFlags flags;
  flags.read_listen = "unix:/run/tailgate/read.sock";
  config = Load(std::string("read_listen: \"127.0.0.1:7443\"\n") + kUpstream,
                flags, Given({"read_listen"}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->read_listen->ToString(), "unix:/run/tailgate/read.sock");

  EXPECT_EQ(ErrorOf(std::string("listen: \"127.0.0.1:7080\"\n"
                                "read_listen: \"127.0.0.1:7080\"\n") +
                    kUpstream),
            "sidecar.textproto:2:1: read_listen: same address as --listen "
            "(127.0.0.1:7080)");
}

}  // namespace
}  // namespace tailgate::server
