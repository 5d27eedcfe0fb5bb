// The engine's HTTP/2 and TLS paths against a real nginx: h2 with prior
// knowledge over http://, https verified against a configured CA (HTTP/1.1
// by default, h2 through ALPN with kHttp2), an untrusted certificate failing
// as a transport failure with no TLS detail, and hedging over h2.
//
// nginx records "$server_protocol" in its access log, which is how a test
// tells which protocol the engine really spoke.

#include <curl/curl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hedge/errors/field_error.h"
#include "hedge/hygiene/replica_url.h"
#include "tests/integration/engine_fixture.h"
#include "tests/process/nginx_replica.h"
#include "tests/replica/silent_listener.h"

namespace tailgate::testing {
namespace {

class EngineTlsH2Test : public EngineFixture {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> dir = MakeTempDir("certs.");
    ASSERT_TRUE(dir.ok()) << dir.status();
    absl::StatusOr<TestCertificates> certs = MakeTestCertificates(*dir);
    ASSERT_TRUE(certs.ok()) << certs.status();
    certs_ = *certs;
  }

  // Starts an nginx answering "/a" and "/b" and returns it.
  NginxReplica* StartNginx(bool tls, bool http2) {
    NginxOptions options;
    options.tls = tls;
    options.http2 = http2;
    options.cert_file = certs_.cert_file;
    options.key_file = certs_.key_file;
    options.locations = {{"/a", "body a"}, {"/b", "body b"}};
    absl::StatusOr<std::unique_ptr<NginxReplica>> nginx =
        NginxReplica::Start(std::move(options));
    EXPECT_TRUE(nginx.ok()) << nginx.status();
    if (!nginx.ok()) return nullptr;
    nginx_.push_back(std::move(*nginx));
    return nginx_.back().get();
  }

  static hedge::EngineConfig Config(hedge::HttpVersion version,
                                    std::string ca_file) {
    hedge::EngineConfig config = DefaultConfig();
    config.timeout = absl::Seconds(5);
    config.upstreams[0].http_version = version;
    config.upstreams[0].ca_file = std::move(ca_file);
    return config;
  }

  void ExpectBody(const absl::StatusOr<hedge::EngineResponse>& response,
                  const std::string& body) {
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, body);
  }

  // Reads /a and /b; nginx must have logged both with `protocol`, e.g.
  // "HTTP/2.0", on a connection the engine then left idle.
  void ExpectTwoReadsOver(NginxReplica& nginx, const std::string& protocol) {
    ExpectBody(Read("/a"), "body a");
    ExpectBody(Read("/b"), "body b");
    const std::vector<std::string> lines = nginx.WaitForAccessLogLines(2);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0], protocol + " GET /a 200");
    EXPECT_EQ(lines[1], protocol + " GET /b 200");
    ExpectIdle();
  }

  TestCertificates certs_;
  // Outlive the engine: the base TearDown() destroys it first.
  std::vector<std::unique_ptr<NginxReplica>> nginx_;
};

bool CurlReusesH2cConnections() {
  return curl_version_info(CURLVERSION_NOW)->version_num >= 0x080000;
}

// libcurl before 8.0.0 fails a transfer that reuses an h2c prior-knowledge
// connection with CURLE_HTTP2 (curl/curl#10634, fixed in 8.0.0); Debian 12
// ships 7.88.1. The engine keeps connections alive, so there it refuses h2c
// at start-up instead of failing every read after the first.
TEST_F(EngineTlsH2Test, H2cIsRefusedWhereLibcurlCannotReuseIt) {
  if (CurlReusesH2cConnections()) GTEST_SKIP() << "libcurl >= 8.0.0";
  hedge::EngineConfig config = Config(hedge::HttpVersion::kHttp2, "");
  config.upstreams[0].replicas =
      *hygiene::ParseReplicaList("http://127.0.0.1:1");
  const absl::StatusOr<std::unique_ptr<hedge::Engine>> engine =
      CreateEngine(std::move(config));
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(hedge::ErrorField(engine.status()), "http_version")
      << engine.status();
}

TEST_F(EngineTlsH2Test, H2cPriorKnowledgeReusesConnection) {
  if (!CurlReusesH2cConnections()) GTEST_SKIP() << "libcurl < 8.0.0";
  NginxReplica* nginx = StartNginx(/*tls=*/false, /*http2=*/true);
  ASSERT_NE(nginx, nullptr);
  StartEngineWithUrls(Config(hedge::HttpVersion::kHttp2, ""), {nginx->url()});

  ExpectTwoReadsOver(*nginx, "HTTP/2.0");
}

TEST_F(EngineTlsH2Test, HttpsWithCaFileUsesHttp1ByDefault) {
  NginxReplica* nginx = StartNginx(/*tls=*/true, /*http2=*/true);
  ASSERT_NE(nginx, nullptr);
  ASSERT_TRUE(absl::StartsWith(nginx->url(), "https://"));
  StartEngineWithUrls(Config(hedge::HttpVersion::kHttp1, certs_.ca_file),
                      {nginx->url()});

  ExpectBody(Read("/a"), "body a");

  // The server offers h2 through ALPN; the engine must not take it.
  const std::vector<std::string> lines = nginx->WaitForAccessLogLines(1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "HTTP/1.1 GET /a 200");
  ExpectIdle();
}

TEST_F(EngineTlsH2Test, HttpsHttp2NegotiatesH2ThroughAlpn) {
  NginxReplica* nginx = StartNginx(/*tls=*/true, /*http2=*/true);
  ASSERT_NE(nginx, nullptr);
  StartEngineWithUrls(Config(hedge::HttpVersion::kHttp2, certs_.ca_file),
                      {nginx->url()});

  ExpectTwoReadsOver(*nginx, "HTTP/2.0");
}

TEST_F(EngineTlsH2Test, HttpsHttp2FallsBackToHttp1WithoutH2OnServer) {
  // A TLS server that does not offer h2 in ALPN: kHttp2 over https is
  // "h2 if negotiated", so the read still works, over HTTP/1.1.
  NginxReplica* nginx = StartNginx(/*tls=*/true, /*http2=*/false);
  ASSERT_NE(nginx, nullptr);
  StartEngineWithUrls(Config(hedge::HttpVersion::kHttp2, certs_.ca_file),
                      {nginx->url()});

  ExpectBody(Read("/a"), "body a");

  const std::vector<std::string> lines = nginx->WaitForAccessLogLines(1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "HTTP/1.1 GET /a 200");
}

TEST_F(EngineTlsH2Test, UntrustedCertificateFailsUnavailableWithoutDetail) {
  NginxReplica* nginx = StartNginx(/*tls=*/true, /*http2=*/true);
  ASSERT_NE(nginx, nullptr);
  for (hedge::HttpVersion version :
       {hedge::HttpVersion::kHttp1, hedge::HttpVersion::kHttp2}) {
    // No ca_file: the system CAs, which do not know the test CA.
    StartEngineWithUrls(Config(version, ""), {nginx->url()});

    const absl::StatusOr<hedge::EngineResponse> response = Read("/a");
    ASSERT_FALSE(response.ok());
    EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable)
        << response.status();
    ExpectNoTransportDetail(response.status(), {nginx->port()});
    const std::string message =
        absl::AsciiStrToLower(response.status().message());
    for (const char* detail : {"ssl", "tls", "certificate", "verif", "issuer",
                               "peer", "x509", "openssl"}) {
      EXPECT_FALSE(absl::StrContains(message, detail))
          << "\"" << response.status().message() << "\" leaks \"" << detail
          << "\"";
    }
    ExpectIdle();
  }
  // The handshake failed, so no request reached nginx.
  EXPECT_TRUE(nginx->WaitForAccessLogLines(1, absl::Milliseconds(100)).empty());
}

TEST_F(EngineTlsH2Test, HedgeOverH2WinsAgainstStuckReplica) {
  // One replica accepts connections and never answers (not even the TLS
  // handshake); the other is nginx over TLS with h2 (ALPN). (Over h2c the
  // system libcurl cannot reuse connections; see above.) Whichever the rotation
  // makes primary, every read is answered by nginx over HTTP/2, and a read
  // whose primary is stuck is won by its hedge.
  absl::StatusOr<std::unique_ptr<SilentListener>> stuck =
      SilentListener::Start();
  ASSERT_TRUE(stuck.ok()) << stuck.status();
  NginxReplica* nginx = StartNginx(/*tls=*/true, /*http2=*/true);
  ASSERT_NE(nginx, nullptr);
  StartEngineWithUrls(
      Config(hedge::HttpVersion::kHttp2, certs_.ca_file),
      {absl::StrCat("https://127.0.0.1:", (*stuck)->port()), nginx->url()});

  constexpr int kReads = 4;
  int hedge_wins = 0;
  for (int i = 0; i < kReads; ++i) {
    const absl::StatusOr<hedge::EngineResponse> response =
        Read(i % 2 == 0 ? "/a" : "/b");
    ExpectBody(response, i % 2 == 0 ? "body a" : "body b");
    if (!response.ok()) continue;
    EXPECT_EQ(response->trace.replica, nginx->url());
    hedge_wins += response->trace.hedge_won;
  }
  EXPECT_GE(hedge_wins, 1);
  EXPECT_GE((*stuck)->connections_accepted(), 1);

  const std::vector<std::string> lines = nginx->WaitForAccessLogLines(kReads);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kReads));
  for (const std::string& line : lines) {
    EXPECT_TRUE(absl::StartsWith(line, "HTTP/2.0 GET /")) << line;
  }
  engine_.reset();  // before the stuck listener goes
}

}  // namespace
}  // namespace tailgate::testing
