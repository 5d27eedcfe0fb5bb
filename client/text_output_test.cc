#include "client/text_output.h"

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::cli {
namespace {

using ::testing::HasSubstr;

TEST(FormatRequestTest, ShowsTargetOptionsAndRequestLines) {
  ReadRequest request;
  request.path = "/a?b=1";
  request.headers = {{"Accept", "text/plain"}};
  EXPECT_EQ(FormatRequest("127.0.0.1:8080", absl::Seconds(5), request),
            "* target=127.0.0.1:8080 upstream=(default) deadline=5s "
            "hedge=(default)\n"
            "> GET /a?b=1\n"
            "> Accept: text/plain\n");
  request.method = Method::kHead;
  request.upstream = "eu";
  request.hedge_delay = absl::Milliseconds(7);
  EXPECT_EQ(FormatRequest("unix:/t.sock", absl::Milliseconds(250), request),
            "* target=unix:/t.sock upstream=eu deadline=250ms hedge=7ms\n"
            "> HEAD /a?b=1\n"
            "> Accept: text/plain\n");
  request.hedge_delay = absl::ZeroDuration();
  request.disable_hedge = true;
  EXPECT_THAT(FormatRequest("t", absl::Seconds(1), request),
              HasSubstr(" hedge=off\n"));
}

TEST(FormatResponseTest, ShowsStatusHeadersAndTrace) {
  ReadResponse response;
  response.status = 503;
  response.headers = {{"content-type", "text/html"}, {"retry-after", "1"}};
  response.body = "ignored";
  response.trace = {2, true, false, "http://r1:80", absl::Microseconds(4200)};
  EXPECT_EQ(FormatResponse(response),
            "< HTTP 503\n"
            "< content-type: text/html\n"
            "< retry-after: 1\n"
            "* trace attempts=2 hedged=true hedge_won=false "
            "replica=http://r1:80 latency=4.2ms\n");
}

TEST(FormatErrorTest, OneLineWithTheCodeName) {
  EXPECT_EQ(FormatError(absl::ResourceExhaustedError(
                "response over max_response_bytes (1024)")),
            "tailgate_read: RESOURCE_EXHAUSTED: response over "
            "max_response_bytes (1024)\n");
  EXPECT_EQ(FormatError(absl::UnavailableError("a\nb\r\nc")),
            "tailgate_read: UNAVAILABLE: a b  c\n");
}

SidecarStats SomeStats() {
  SidecarStats stats;
  stats.requests = 100;
  stats.attempts = 105;
  stats.hedges = 5;
  stats.hedge_wins = 3;
  stats.hedges_skipped = 7;
  stats.cancelled = 4;
  stats.in_flight = -1;
  stats.amplification = 1.05;
  stats.hedge_credits = 2;
  stats.replicas = {{"http://a:1", CircuitState::kClosed, 0, 60, 0, 1},
                    {"http://long-name:2", CircuitState::kOpen, 3, 45, 9, 0}};
  return stats;
}

TEST(FormatStatsTableTest, CountersThenReplicas) {
  EXPECT_EQ(FormatStatsTable(SomeStats()),
            "requests           100\n"
            "rejected           0\n"
            "attempts           105\n"
            "hedges             5\n"
            "hedge_wins         3\n"
            "hedges_skipped     7\n"
            "timeouts           0\n"
            "cancelled          4\n"
            "backend_failures   0\n"
            "in_flight          -1\n"
            "amplification      1.05\n"
            "hedge_credits      2\n"
            "\n"
            "REPLICA             CIRCUIT    GENERATION    ATTEMPTS    FAILURES"
            "  IN_FLIGHT\n"
            "http://a:1          closed              0          60           0"
            "          1\n"
            "http://long-name:2  open                3          45           9"
            "          0\n");
}

TEST(FormatStatsTableTest, NoReplicaSectionWithoutReplicas) {
  EXPECT_THAT(FormatStatsTable(SidecarStats()),
              ::testing::Not(HasSubstr("REPLICA")));
}

TEST(FormatStatsJsonTest, OneObjectWithProtoFieldNames) {
  SidecarStats stats = SomeStats();
  stats.replicas[1].url = "http://q\"uote\\d/\x01";
  EXPECT_EQ(FormatStatsJson(stats),
            "{\"requests\":100,\"rejected\":0,\"attempts\":105,\"hedges\":5,"
            "\"hedge_wins\":3,\"hedges_skipped\":7,\"timeouts\":0,"
            "\"cancelled\":4,\"backend_failures\":0,"
            "\"in_flight\":-1,\"amplification\":1.05,\"hedge_credits\":2,"
            "\"replicas\":["
            "{\"url\":\"http://a:1\",\"circuit\":\"closed\",\"generation\":0,"
            "\"attempts\":60,\"failures\":0,\"in_flight\":1},"
            "{\"url\":\"http://q\\\"uote\\\\d/\\u0001\",\"circuit\":\"open\","
            "\"generation\":3,\"attempts\":45,\"failures\":9,\"in_flight\":0}"
            "]}\n");
}

TEST(FormatStatsJsonTest, NonFiniteNumbersBecomeNull) {
  SidecarStats stats;
  stats.amplification = std::numeric_limits<double>::quiet_NaN();
  stats.hedge_credits = std::numeric_limits<double>::infinity();
  EXPECT_THAT(FormatStatsJson(stats),
              HasSubstr("\"amplification\":null,\"hedge_credits\":null,"
                        "\"replicas\":[]}"));
}

}  // namespace
}  // namespace tailgate::cli
