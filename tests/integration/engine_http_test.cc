// The engine's HTTP behaviour against real loopback replicas: the response
// size limit, request hygiene (Accept-Encoding, Host, the target byte for
// byte, no proxy), response hygiene (hop-by-hop headers, header limits, no
// transport detail in errors), HEAD, keep-alive, and malformed or cut
// responses counted as replica failures.

#include <curl/curl.h>
#include <stdlib.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

using Fault = ReplicaResponse::Fault;

constexpr absl::Duration kLongHedgeDelay = absl::Seconds(2);
constexpr absl::Duration kAtOnce = absl::Milliseconds(500);
constexpr int64_t kLimit = 1000;

hedge::EngineConfig HttpConfig() {
  hedge::EngineConfig config = EngineFixture::DefaultConfig();
  config.upstreams[0].hedge_delay = kLongHedgeDelay;
  config.timeout = absl::Seconds(5);
  config.max_response_bytes = kLimit;
  return config;
}

std::optional<std::string> HeaderValue(const HeaderList& headers,
                                       absl::string_view name) {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return std::nullopt;
}

int CountHeaders(const HeaderList& headers, absl::string_view name) {
  int n = 0;
  for (const auto& header : headers) {
    n += absl::EqualsIgnoreCase(header.first, name);
  }
  return n;
}

bool HasHeader(const hedge::EngineResponse& response, absl::string_view name) {
  return hygiene::HasHeader(response.headers, name);
}

void ExpectTooLarge(const absl::StatusOr<hedge::EngineResponse>& response) {
  EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted)
      << response.status();
  EXPECT_TRUE(
      absl::StrContains(response.status().message(), "max_response_bytes"))
      << response.status();
}

// A complete chunked response with no Content-Length: the body, encoded by
// hand in chunks of `chunk` bytes, goes out as the replica's raw body.
ReplicaResponse Chunked(const std::string& body, size_t chunk) {
  std::string encoded;
  for (size_t at = 0; at < body.size(); at += chunk) {
    const std::string piece = body.substr(at, chunk);
    absl::StrAppend(&encoded, absl::Hex(piece.size()), "\r\n", piece, "\r\n");
  }
  absl::StrAppend(&encoded, "0\r\n\r\n");
  ReplicaResponse response = Answer(encoded);
  response.headers = {{"Transfer-Encoding", "chunked"}};
  return response;
}

class EngineHttpTest : public EngineFixture {
 protected:
  void ExpectEveryReplicaSawTheClientGo() {
    for (const auto& replica : replicas_) {
      EXPECT_TRUE(
          replica->WaitForDisconnectsBeforeResponse(1, absl::Seconds(2)))
          << replica->url();
    }
  }
};

TEST_F(EngineHttpTest, StreamedBodyOverTheLimitIsCutOff) {
  // Chunked, so there is no Content-Length to check up front.
  ReplicaResponse endless = Faulty(Fault::kEndlessChunked, "abcdefghij");
  endless.drip_bytes = 100;
  StartReplicas({Always(endless), Always(endless)});
  StartEngine(HttpConfig());
  absl::StatusOr<hedge::EngineResponse> response = Read("/stream");
  ExpectTooLarge(response);
  EXPECT_LT(last_latency_, kAtOnce);  // fell back at once, then gave up
  ExpectEveryReplicaSawTheClientGo();
  EXPECT_EQ(engine_->Snapshot().fallbacks, 1u);
  ExpectIdle();
}

TEST_F(EngineHttpTest, DeclaredLengthOverTheLimitIsRejectedBeforeTheBody) {
  // The replicas declare a huge Content-Length and send no body at all: only
  // a check of the header can end this read before its 5 s deadline.
  StartReplicas({Always(Faulty(Fault::kHugeContentLength)),
                 Always(Faulty(Fault::kHugeContentLength))});
  StartEngine(HttpConfig());
  absl::StatusOr<hedge::EngineResponse> response = Read("/huge");
  ExpectTooLarge(response);
  EXPECT_LT(last_latency_, kAtOnce);
  ExpectEveryReplicaSawTheClientGo();
  ExpectIdle();
}

TEST_F(EngineHttpTest, BodyOfExactlyTheLimitIsAccepted) {
  const std::string body(kLimit, 'x');
  ReplicaResponse dripped = Faulty(Fault::kDrip, body);
  dripped.drip_bytes = 64;  // arrives in many writes
  StartReplicas({Route({{"/whole", Always(Answer(body))},
                        {"/dripped", Always(dripped)},
                        {"/chunked", Always(Chunked(body, 64))}})});
  StartEngine(HttpConfig());
  for (const char* target : {"/whole", "/dripped", "/chunked"}) {
    absl::StatusOr<hedge::EngineResponse> response = Read(target);
    ASSERT_TRUE(response.ok()) << target << ": " << response.status();
    EXPECT_EQ(response->body, body) << target;
  }
}

TEST_F(EngineHttpTest, BodyOneByteOverTheLimitIsRejected) {
  const std::string body(kLimit + 1, 'x');
  ReplicaResponse dripped = Faulty(Fault::kDrip, body);
  dripped.drip_bytes = 64;
  StartReplicas({Route({{"/whole", Always(Answer(body))},
                        {"/dripped", Always(dripped)},
                        {"/chunked", Always(Chunked(body, 64))}})});
  StartEngine(HttpConfig());
  for (const char* target : {"/whole", "/dripped", "/chunked"}) {
    SCOPED_TRACE(target);
    ExpectTooLarge(Read(target));
  }
}

// 304 and 204 responses have no body whatever Content-Length says (RFC 9110
// section 8.6: a 304 may carry the length the 200 would have had).
TEST_F(EngineHttpTest, BodylessStatusIsNotJudgedByItsContentLength) {
  const std::string over_limit = absl::StrCat(kLimit * 5);
  ReplicaResponse not_modified = Answer("", absl::ZeroDuration(), 304);
  not_modified.headers = {{"Content-Length", over_limit}, {"ETag", "\"v1\""}};
  ReplicaResponse no_content = Answer("", absl::ZeroDuration(), 204);
  no_content.headers = {{"Content-Length", over_limit}};
  StartReplicas(
      {Route({{"/304", Always(not_modified)}, {"/204", Always(no_content)}})});
  StartEngine(HttpConfig());
  hedge::EngineRead conditional = Get("/304");
  conditional.headers = {{"If-None-Match", "\"v1\""}};
  absl::StatusOr<hedge::EngineResponse> response = Read(std::move(conditional));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 304);
  EXPECT_EQ(response->body, "");
  EXPECT_TRUE(HasHeader(*response, "ETag"));
  absl::StatusOr<hedge::EngineResponse> empty = Read("/204");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->status, 204);
  EXPECT_EQ(engine_->Snapshot().backend_failures, 0u);
}

TEST_F(EngineHttpTest, AcceptEncodingIdentityUnlessTheCallerSetOne) {
  StartReplicas({Always(Answer("ok"))});
  StartEngine(HttpConfig());
  ASSERT_TRUE(Read("/plain").ok());
  hedge::EngineRead read = Get("/gzip");
  read.headers = {{"accept-encoding", "gzip"}};
  ASSERT_TRUE(Read(std::move(read)).ok());
  const std::vector<ReplicaRequest> requests = replicas_[0]->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(HeaderValue(requests[0].headers, "Accept-Encoding"), "identity");
  EXPECT_EQ(CountHeaders(requests[0].headers, "Accept-Encoding"), 1);
  EXPECT_EQ(HeaderValue(requests[1].headers, "Accept-Encoding"), "gzip");
  EXPECT_EQ(CountHeaders(requests[1].headers, "Accept-Encoding"), 1);
}

TEST_F(EngineHttpTest, HostIsTheReplicaHostAndPort) {
  StartReplicas({Always(Answer("ok"))});
  StartEngine(HttpConfig());
  ASSERT_TRUE(Read("/x").ok());
  const std::vector<ReplicaRequest> requests = replicas_[0]->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(HeaderValue(requests[0].headers, "Host"),
            absl::StrCat("127.0.0.1:", replicas_[0]->port()));
  EXPECT_EQ(CountHeaders(requests[0].headers, "Host"), 1);
}

TEST_F(EngineHttpTest, TargetIsSentByteForByteUnderTheBasePath) {
  StartReplicas({Always(Answer("ok"))});
  StartEngineWithUrls(HttpConfig(), {replicas_[0]->url() + "/base"});
  const std::vector<std::string> targets = {
      "/a%2Fb?q=1&x=%2e%2e",
      "/x/..y/.../%2E%2e%2E/z;p=1?q=../%2F&r=a+b&s=%252F",
      "/%7Euser//double?empty=&=v&a=1&a=2",
  };
  for (const std::string& target : targets) {
    ASSERT_TRUE(Read(target).ok()) << target;
  }
  const std::vector<ReplicaRequest> requests = replicas_[0]->requests();
  ASSERT_EQ(requests.size(), targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    EXPECT_EQ(requests[i].uri, "/base" + targets[i]);
  }
}

TEST_F(EngineHttpTest, HopByHopResponseHeadersAreStripped) {
  ReplicaResponse response = Answer("ok");
  response.headers = {
      {"Connection", "X-Private, Keep-Alive"},
      {"X-Private", "secret"},
      {"Keep-Alive", "timeout=5"},
      {"TE", "trailers"},
      {"Trailer", "X-Checksum"},
      {"Upgrade", "h2c"},
      {"Proxy-Authenticate", "Basic"},
      {"Proxy-Connection", "keep-alive"},
      {"X-End-To-End", "kept"},
      {"Cache-Control", "max-age=5"},
  };
  StartReplicas({Always(response)});
  StartEngine(HttpConfig());
  absl::StatusOr<hedge::EngineResponse> result = Read("/x");
  ASSERT_TRUE(result.ok()) << result.status();
  for (const char* name :
       {"Connection", "X-Private", "Keep-Alive", "TE", "Trailer", "Upgrade",
        "Proxy-Authenticate", "Proxy-Connection"}) {
    EXPECT_FALSE(HasHeader(*result, name)) << name;
  }
  EXPECT_TRUE(HasHeader(*result, "X-End-To-End"));
  EXPECT_TRUE(HasHeader(*result, "Cache-Control"));
  EXPECT_TRUE(HasHeader(*result, "Content-Length"));
}

TEST_F(EngineHttpTest, TransferEncodingIsDecodedAndStripped) {
  StartReplicas({Always(Chunked("hello, chunked world", 5))});
  StartEngine(HttpConfig());
  absl::StatusOr<hedge::EngineResponse> result = Read("/c");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->body, "hello, chunked world");
  EXPECT_FALSE(HasHeader(*result, "Transfer-Encoding"));
}

// Sets proxy variables for the test's duration, restoring them after.
class ScopedProxyEnvironment {
 public:
  explicit ScopedProxyEnvironment(const std::string& proxy) {
    for (const char* name : kProxyNames) Set(name, proxy.c_str());
    for (const char* name : kNoProxyNames) Set(name, nullptr);
  }
  ~ScopedProxyEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value.has_value()) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }

 private:
  static constexpr const char* kProxyNames[] = {"http_proxy", "HTTP_PROXY",
                                                "ALL_PROXY", "all_proxy"};
  static constexpr const char* kNoProxyNames[] = {"no_proxy", "NO_PROXY"};

  void Set(const char* name, const char* value) {
    const char* old = getenv(name);
    saved_.emplace_back(
        name, old == nullptr ? std::nullopt : std::optional<std::string>(old));
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, 1);
    }
  }

  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

size_t Discard(char*, size_t size, size_t count, void*) { return size * count; }

// What a plain libcurl GET does with the environment: the control that
// shows the proxy variables are live.
void FetchWithDefaultCurl(const std::string& url) {
  CURL* easy = curl_easy_init();
  ASSERT_NE(easy, nullptr);
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Discard);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 2000L);
  curl_easy_perform(easy);
  curl_easy_cleanup(easy);
}

// The proxy variables outlive the engine (members go after TearDown), so
// libcurl never reads the environment while it is being restored.
class EngineProxyTest : public EngineHttpTest {
 protected:
  std::optional<ScopedProxyEnvironment> environment_;
};

TEST_F(EngineProxyTest, NoProxyIsTakenFromTheEnvironment) {
  absl::StatusOr<std::unique_ptr<Replica>> proxy =
      Replica::Start(Always(Answer("from the proxy")));
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  environment_.emplace((*proxy)->url());
  StartReplicas({Always(Answer("direct"))});

  FetchWithDefaultCurl(replicas_[0]->url() + "/control");
  ASSERT_EQ((*proxy)->requests_received(), 1)
      << "the proxy variables do not reach libcurl; the test proves nothing";
  EXPECT_EQ(replicas_[0]->requests_received(), 0);

  StartEngine(HttpConfig());
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "direct");
  EXPECT_EQ(replicas_[0]->requests_received(), 1);
  EXPECT_EQ((*proxy)->requests_received(), 1);
  EXPECT_EQ((*proxy)->connections_accepted(), 1);
}

TEST_F(EngineHttpTest, FailureMessagesCarryNoTransportDetail) {
  ReplicaResponse endless = Faulty(Fault::kEndlessChunked, "x");
  endless.drip_bytes = 100;
  StartReplicas({Route({
      {"/reset", Always(Faulty(Fault::kResetAtOnce))},
      {"/status", Always(Faulty(Fault::kMalformedStatus))},
      {"/headers", Always(Faulty(Fault::kMalformedHeaders, "body"))},
      {"/cut", Always(Faulty(Fault::kCloseMidBody, "0123456789"))},
      {"/huge", Always(Faulty(Fault::kHugeContentLength))},
      {"/endless", Always(endless)},
      {"/hang", Always(Hang())},
  })});
  const std::string refused = RefusedUrl();
  const int refused_port = std::stoi(refused.substr(refused.rfind(':') + 1));
  const std::vector<int> ports = {replicas_[0]->port(), refused_port};
  hedge::EngineConfig config = HttpConfig();
  config.timeout = absl::Milliseconds(200);  // for /hang
  // No timer hedge before the deadline: only fallbacks.
  config.upstreams[0].hedge_delay = config.timeout - absl::Milliseconds(1);
  config.upstreams[0].circuit.failure_threshold = 1000;  // keep trying both
  StartEngineWithUrls(config, {replicas_[0]->url(), refused});
  struct Case {
    const char* target;
    absl::StatusCode code;
  };
  for (const Case& c : {Case{"/reset", absl::StatusCode::kUnavailable},
                        Case{"/status", absl::StatusCode::kUnavailable},
                        Case{"/headers", absl::StatusCode::kUnavailable},
                        Case{"/cut", absl::StatusCode::kUnavailable},
                        Case{"/huge", absl::StatusCode::kResourceExhausted},
                        Case{"/endless", absl::StatusCode::kResourceExhausted},
                        Case{"/hang", absl::StatusCode::kDeadlineExceeded}}) {
    // Of each pair of reads, one meets the refused port first.
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<hedge::EngineResponse> response = Read(c.target);
      EXPECT_EQ(response.status().code(), c.code)
          << c.target << ": " << response.status();
      ExpectNoTransportDetail(response.status(), ports);
    }
  }
}

TEST_F(EngineHttpTest, TooManyResponseHeadersFailTheAttempt) {
  ReplicaResponse crowded = Answer("crowded");
  for (int i = 0; i < 6; ++i) {
    crowded.headers.emplace_back(absl::StrCat("X-H", i), "v");
  }
  StartReplicas({Always(crowded)});
  StartEngine(HttpConfig());
  absl::StatusOr<hedge::EngineResponse> unlimited = Read("/crowded");
  ASSERT_TRUE(unlimited.ok()) << unlimited.status();
  const int count = static_cast<int>(unlimited->headers.size());
  ASSERT_GE(count, 6);

  // Exactly the limit passes; one header more is a replica failure.
  hedge::EngineConfig config = HttpConfig();
  config.max_response_headers = count;
  StartEngine(config);
  ASSERT_TRUE(Read("/crowded").ok());
  config.max_response_headers = count - 1;
  StartEngine(config);
  absl::StatusOr<hedge::EngineResponse> refused = Read("/crowded");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable)
      << refused.status();
  EXPECT_EQ(engine_->Snapshot().backend_failures, 1u);
  ExpectIdle();
}

TEST_F(EngineHttpTest, TooManyResponseHeadersFallBackToTheOtherReplica) {
  ReplicaResponse crowded = Answer("crowded");
  for (int i = 0; i < 20; ++i) {
    crowded.headers.emplace_back(absl::StrCat("X-H", i), "v");
  }
  const Handler script = PerAttempt({crowded, Answer("lean")});
  StartReplicas({script, script});
  hedge::EngineConfig config = HttpConfig();
  config.max_response_headers = 10;
  StartEngine(config);
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "lean");
  EXPECT_TRUE(response->trace.hedge_won);
  EXPECT_LT(response->trace.latency, kAtOnce);
  EXPECT_EQ(engine_->Snapshot().backend_failures, 1u);
}

TEST_F(EngineHttpTest, HeadReturnsTheHeadersAndNoBody) {
  ReplicaResponse response = Answer("hello");
  response.headers = {{"X-Meta", "m"}};
  StartReplicas({Always(response)});
  StartEngine(HttpConfig());
  hedge::EngineRead read = Get("/h");
  read.head = true;
  absl::StatusOr<hedge::EngineResponse> result = Read(std::move(read));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, 200);
  EXPECT_EQ(result->body, "");
  EXPECT_TRUE(HasHeader(*result, "X-Meta"));
  bool length_seen = false;
  for (const hygiene::HttpHeader& header : result->headers) {
    if (absl::EqualsIgnoreCase(header.name, "Content-Length")) {
      length_seen = true;
      EXPECT_EQ(header.value, "5");
    }
  }
  EXPECT_TRUE(length_seen);
  const std::vector<ReplicaRequest> requests = replicas_[0]->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "HEAD");
  // The connection is reusable: nothing was left unread on it.
  ASSERT_TRUE(Read("/after-head").ok());
  EXPECT_EQ(replicas_[0]->connections_accepted(), 1);
}

TEST_F(EngineHttpTest, SequentialReadsReuseConnections) {
  StartReplicas({Always(Answer("ok")), Always(Answer("ok"))});
  StartEngine(HttpConfig());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(Read(absl::StrCat("/k?i=", i)).ok());
  }
  EXPECT_EQ(TotalRequests(), 20);
  EXPECT_LE(replicas_[0]->connections_accepted() +
                replicas_[1]->connections_accepted(),
            2);
}

class EngineFaultTest : public EngineHttpTest,
                        public ::testing::WithParamInterface<Fault> {};

TEST_P(EngineFaultTest, FaultyResponseFallsBackToTheHealthyReplica) {
  const Handler script =
      PerAttempt({Faulty(GetParam(), "partial-body"), Answer("healthy")});
  StartReplicas({script, script});
  StartEngine(HttpConfig());
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "healthy");
  EXPECT_EQ(response->trace.attempts, 2);
  EXPECT_TRUE(response->trace.hedge_won);
  EXPECT_LT(response->trace.latency, kAtOnce);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.fallbacks, 1u);
  EXPECT_EQ(stats.backend_failures, 1u);
  for (const hedge::ReplicaSnapshot& replica : stats.replicas) {
    EXPECT_EQ(replica.failures,
              replica.url == response->trace.replica ? 0u : 1u)
        << replica.url;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Faults, EngineFaultTest,
    ::testing::Values(Fault::kMalformedStatus, Fault::kMalformedHeaders,
                      Fault::kResetAtOnce, Fault::kCloseMidBody),
    [](const ::testing::TestParamInfo<Fault>& info) -> std::string {
      switch (info.param) {
        case Fault::kMalformedStatus:
          return "MalformedStatusLine";
        case Fault::kMalformedHeaders:
          return "MalformedHeaders";
        case Fault::kResetAtOnce:
          return "ConnectionReset";
        case Fault::kCloseMidBody:
          return "CloseMidBody";
        default:
          return "Other";
      }
    });

}  // namespace
}  // namespace tailgate::testing
