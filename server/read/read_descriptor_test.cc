#include "server/read/read_descriptor.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

constexpr absl::Duration kTimeout = absl::Seconds(1);

v1::ReadRequest Request(const char* path = "/p/a%2Fb?q=1") {
  v1::ReadRequest request;
  request.set_path(path);
  return request;
}

// The INVALID_ARGUMENT message for `request`.
std::string Invalid(const v1::ReadRequest& request) {
  absl::StatusOr<hedge::EngineRead> read =
      EngineReadFromRequest(request, kTimeout);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(read.status().message());
}

TEST(EngineReadFromRequestTest, CarriesEveryField) {
  v1::ReadRequest request = Request();
  request.set_method(v1::METHOD_HEAD);
  v1::Header* header = request.add_headers();
  header->set_name("Accept");
  header->set_value("text/plain");
  request.set_upstream("blue");
  request.set_tenant("team-a.eu_1");
  request.mutable_hedge()->set_disable(true);
  request.mutable_hedge()->mutable_delay()->set_nanos(5'000'000);

  absl::StatusOr<hedge::EngineRead> read =
      EngineReadFromRequest(request, kTimeout);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->target, "/p/a%2Fb?q=1");
  EXPECT_TRUE(read->head);
  ASSERT_EQ(read->headers.size(), 1u);
  EXPECT_EQ(read->headers[0].name, "Accept");
  EXPECT_EQ(read->headers[0].value, "text/plain");
  EXPECT_EQ(read->upstream, "blue");
  EXPECT_EQ(read->tenant, "team-a.eu_1");
  EXPECT_TRUE(read->hedge_disabled);
  EXPECT_EQ(read->hedge_delay, absl::Milliseconds(5));
}

TEST(EngineReadFromRequestTest, UnspecifiedMethodIsGet) {
  absl::StatusOr<hedge::EngineRead> read =
      EngineReadFromRequest(Request(), kTimeout);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->head);
  EXPECT_EQ(read->upstream, "");
  EXPECT_EQ(read->tenant, "");  // no tenant: the tenant ""
  EXPECT_FALSE(read->hedge_disabled);
  EXPECT_EQ(read->hedge_delay, std::nullopt);
}

TEST(EngineReadFromRequestTest, ExplicitGet) {
  v1::ReadRequest request = Request();
  request.set_method(v1::METHOD_GET);
  EXPECT_FALSE(EngineReadFromRequest(request, kTimeout)->head);
}

TEST(EngineReadFromRequestTest, BadPathIsNamed) {
  for (const char* path : {"", "p", "http://x/p", "/a b", "/a\r\nb", "/a#f"}) {
    EXPECT_TRUE(absl::StartsWith(Invalid(Request(path)), "path ")) << path;
  }
}

TEST(EngineReadFromRequestTest, TenantAtItsLengthLimitIsAccepted) {
  v1::ReadRequest request = Request();
  request.set_tenant(std::string(64, 't'));
  absl::StatusOr<hedge::EngineRead> read =
      EngineReadFromRequest(request, kTimeout);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->tenant, std::string(64, 't'));
}

TEST(EngineReadFromRequestTest, BadTenantIsNamed) {
  v1::ReadRequest request = Request();
  request.set_tenant(std::string(65, 't'));
  EXPECT_EQ(Invalid(request), "tenant: longer than 64 bytes (65)");
  request.set_tenant("team a");
  EXPECT_EQ(Invalid(request),
            "tenant: want letters, digits, \".\", \"_\" and \"-\", got "
            "\"team a\"");
  for (const char* bad : {"a/b", "a\nb", "\xff", "a=b"}) {
    request.set_tenant(bad);
    EXPECT_TRUE(absl::StartsWith(Invalid(request), "tenant: ")) << bad;
  }
}

TEST(EngineReadFromRequestTest, MethodOutOfEnumRange) {
  v1::ReadRequest request = Request();
  request.set_method(static_cast<v1::Method>(7));
  EXPECT_EQ(Invalid(request),
            "method has unknown value 7 (want METHOD_GET or METHOD_HEAD)");
}

TEST(EngineReadFromRequestTest, BadHeaderIsNamedByIndex) {
  v1::ReadRequest request = Request();
  request.add_headers()->set_name("Accept");
  request.add_headers()->set_name("X-Ok");
  request.add_headers()->set_name("Bad Name");
  EXPECT_TRUE(absl::StartsWith(Invalid(request), "headers[2].name "))
      << Invalid(request);
}

TEST(EngineReadFromRequestTest, FramingHeadersAreRejected) {
  for (const char* name :
       {"Host", "content-length", "Transfer-Encoding", "Expect"}) {
    v1::ReadRequest request = Request();
    v1::Header* header = request.add_headers();
    header->set_name(name);
    header->set_value("x");
    EXPECT_TRUE(absl::StartsWith(Invalid(request), "headers[0]")) << name;
  }
}

TEST(EngineReadFromRequestTest, HopByHopHeadersAreDropped) {
  v1::ReadRequest request = Request();
  v1::Header* connection = request.add_headers();
  connection->set_name("Connection");
  connection->set_value("close");
  request.add_headers()->set_name("Accept");
  absl::StatusOr<hedge::EngineRead> read =
      EngineReadFromRequest(request, kTimeout);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->headers.size(), 1u);
  EXPECT_EQ(read->headers[0].name, "Accept");
}

TEST(EngineReadFromRequestTest, ZeroHedgeDelayMeansTheServerDelay) {
  v1::ReadRequest request = Request();
  request.mutable_hedge()->mutable_delay();
  EXPECT_EQ(EngineReadFromRequest(request, kTimeout)->hedge_delay,
            std::nullopt);
}

TEST(EngineReadFromRequestTest, HedgeDelayJustBelowTimeoutIsAccepted) {
  v1::ReadRequest request = Request();
  request.mutable_hedge()->mutable_delay()->set_nanos(999'999'999);
  EXPECT_EQ(EngineReadFromRequest(request, kTimeout)->hedge_delay,
            absl::Nanoseconds(999'999'999));
}

TEST(EngineReadFromRequestTest, HedgeDelayAtOrAboveTimeoutIsRejected) {
  v1::ReadRequest request = Request();
  request.mutable_hedge()->mutable_delay()->set_seconds(1);
  EXPECT_EQ(Invalid(request),
            "hedge.delay must be less than the server's timeout (1s), got 1s");
}

TEST(EngineReadFromRequestTest, NegativeHedgeDelayIsRejected) {
  v1::ReadRequest request = Request();
  request.mutable_hedge()->mutable_delay()->set_nanos(-1'000'000);
  EXPECT_EQ(Invalid(request), "hedge.delay must not be negative, got -1ms");
}

TEST(EngineReadFromRequestTest, MalformedDurationIsRejected) {
  v1::ReadRequest request = Request();
  request.mutable_hedge()->mutable_delay()->set_seconds(1);
  request.mutable_hedge()->mutable_delay()->set_nanos(-1);
  EXPECT_TRUE(absl::StartsWith(Invalid(request),
                               "hedge.delay is not a valid Duration"));
  request.mutable_hedge()->mutable_delay()->set_seconds(0);
  request.mutable_hedge()->mutable_delay()->set_nanos(1'000'000'000);
  EXPECT_TRUE(absl::StartsWith(Invalid(request),
                               "hedge.delay is not a valid Duration"));
}

TEST(EngineDeadlineTest, CallDeadlineMovesToTheEngineClock) {
  const absl::Time wall = absl::FromUnixSeconds(1'700'000'000);
  const absl::Time engine = absl::UnixEpoch() + absl::Hours(5);
  EXPECT_EQ(EngineDeadline(wall + absl::Milliseconds(300), wall, engine),
            engine + absl::Milliseconds(300));
  // Not capped here: the engine caps it at --timeout.
  EXPECT_EQ(EngineDeadline(wall + absl::Seconds(30), wall, engine),
            engine + absl::Seconds(30));
}

TEST(EngineDeadlineTest, MissingDeadlineIsInfinite) {
  const absl::Time wall = absl::FromUnixSeconds(1'700'000'000);
  const absl::Time engine = absl::UnixEpoch() + absl::Hours(5);
  EXPECT_EQ(EngineDeadline(absl::InfiniteFuture(), wall, engine),
            absl::InfiniteFuture());
}

TEST(EngineDeadlineTest, PassedDeadlineStaysInThePast) {
  const absl::Time wall = absl::FromUnixSeconds(1'700'000'000);
  const absl::Time engine = absl::UnixEpoch() + absl::Hours(5);
  EXPECT_EQ(EngineDeadline(wall - absl::Milliseconds(1), wall, engine),
            engine - absl::Milliseconds(1));
}

TEST(FillReadResponseTest, MovesStatusHeadersBodyAndTrace) {
  hedge::EngineResponse engine;
  engine.status = 404;
  engine.headers = {{"Content-Type", "text/plain"}, {"X-A", "1"}};
  engine.body = std::string("not\0found", 9);
  engine.trace.attempts = 2;
  engine.trace.hedged = true;
  engine.trace.hedge_won = true;
  engine.trace.replica = "http://b:80";
  engine.trace.latency = absl::Seconds(1) + absl::Microseconds(2500);

  v1::ReadResponse response;
  FillReadResponse(std::move(engine), &response);
  EXPECT_EQ(response.status(), 404);
  ASSERT_EQ(response.headers_size(), 2);
  EXPECT_EQ(response.headers(1).name(), "X-A");
  EXPECT_EQ(response.headers(1).value(), "1");
  EXPECT_EQ(response.body(), std::string("not\0found", 9));
  EXPECT_EQ(response.trace().attempts(), 2u);
  EXPECT_TRUE(response.trace().hedged());
  EXPECT_TRUE(response.trace().hedge_won());
  EXPECT_EQ(response.trace().replica(), "http://b:80");
  EXPECT_EQ(response.trace().latency().seconds(), 1);
  EXPECT_EQ(response.trace().latency().nanos(), 2'500'000);
}

}  // namespace
}  // namespace tailgate::server
