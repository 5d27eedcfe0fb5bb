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

TEST(FormatManyItemTest, AnAnswerIsIndexStatusSizeAndPath) {
  ReadResponse response;
  response.status = 404;
  response.body = "no\n\"such\"\x01";
  response.trace = {2, true, true, "http://r2:80", absl::Microseconds(4200)};
  const ReadManyItem item{7, response};
  EXPECT_EQ(FormatManyItem(item, "/k/7", false, false), "7 404 10 /k/7\n");
  EXPECT_EQ(FormatManyItem(item, "/k/7", true, false),
            "7 404 10 /k/7 attempts=2 hedged=true hedge_won=true "
            "replica=http://r2:80 latency=4.2ms\n");
  EXPECT_EQ(FormatManyItem(item, "/k/7", false, true),
            "7 404 10 /k/7 body=\"no\\n\\\"such\\\"\\x01\"\n");
}

TEST(FormatManyItemTest, AFailedReadIsIndexCodeAndMessageOnOneLine) {
  const ReadManyItem item{3, absl::NotFoundError("no upstream\nnamed x")};
  EXPECT_EQ(FormatManyItem(item, "/x", true, true),
            "3 NOT_FOUND - /x no upstream named x\n");
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
  ReplicaStats& a = stats.replicas[0];
  a.state = ReplicaState::kServing;
  a.weight = 0.55;
  a.latency = absl::Nanoseconds(12'345'678);
  a.cost_seconds = 0.0246913;
  a.failure_rate = 0.1;
  a.ejections_consecutive = 1;
  a.probes_passed = 2;
  a.ejected_for = absl::Seconds(1);
  ReplicaStats& b = stats.replicas[1];
  b.state = ReplicaState::kEjected;
  b.latency = absl::Milliseconds(200);
  b.cost_seconds = 0.4;
  b.failure_rate = 0.75;
  b.ejections_consecutive = 3;
  b.ejections_failure_rate = 1;
  b.ejections_probe = 5;
  b.probes_failed = 5;
  b.give_ups = 7;
  b.ejected_for = absl::Seconds(8);
  b.backed_off = true;
  b.back_off_remaining = absl::Milliseconds(4500);
  b.overload_answers_429 = 2;
  b.overload_answers_503 = 1;
  stats.upstreams = {{"", absl::Milliseconds(60), true, 6},
                     {"profiles", absl::ZeroDuration(), false, 0}};
  return stats;
}

TEST(FormatStatsTableTest, CountersThenReplicas) {
  EXPECT_EQ(
      FormatStatsTable(SomeStats()),
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
      "REPLICA             STATE        GENERATION    ATTEMPTS    FAILURES"
      "  IN_FLIGHT\n"
      "http://a:1          serving               0          60           0"
      "          1\n"
      "http://long-name:2  ejected               3          45           9"
      "          0\n"
      "\n"
      "REPLICA             WEIGHT     LATENCY     COST_S  FAIL_RATE"
      "  EJECTED_FOR  EJECTIONS c/r/p  PROBES ok/bad  GIVE_UPS  BACKED_OFF"
      "  OVERLOAD 429/503\n"
      "http://a:1            0.55    12.345ms     0.0247        0.1"
      "           1s            1/0/0            2/0         0           -"
      "               0/0\n"
      "http://long-name:2       0       200ms        0.4       0.75"
      "           8s            3/1/5            0/5         7        4.5s"
      "               2/1\n"
      "\n"
      "UPSTREAM   GIVE_UP_AFTER  LEARNED  GIVE_UP_FALLBACKS\n"
      "(default)           60ms     true                  6\n"
      "profiles             off    false                  0\n");
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
            "\"attempts\":60,\"failures\":0,\"in_flight\":1,"
            "\"state\":\"serving\",\"ejections_consecutive\":1,"
            "\"ejections_failure_rate\":0,\"ejections_probe\":0,"
            "\"give_ups\":0,\"probes_passed\":2,\"probes_failed\":0,"
            "\"weight\":0.55,\"cost_seconds\":0.0246913,"
            "\"latency\":\"0.012345678s\",\"failure_rate\":0.1,"
            "\"ejected_for\":\"1s\",\"backed_off\":false,"
            "\"back_off_remaining\":\"0s\",\"overload_answers_429\":0,"
            "\"overload_answers_503\":0,\"degraded\":false},"
            "{\"url\":\"http://q\\\"uote\\\\d/\\u0001\",\"circuit\":\"open\","
            "\"generation\":3,\"attempts\":45,\"failures\":9,\"in_flight\":0,"
            "\"state\":\"ejected\",\"ejections_consecutive\":3,"
            "\"ejections_failure_rate\":1,\"ejections_probe\":5,"
            "\"give_ups\":7,\"probes_passed\":0,\"probes_failed\":5,"
            "\"weight\":0,\"cost_seconds\":0.4,\"latency\":\"0.2s\","
            "\"failure_rate\":0.75,\"ejected_for\":\"8s\","
            "\"backed_off\":true,\"back_off_remaining\":\"4.5s\","
            "\"overload_answers_429\":2,\"overload_answers_503\":1,"
            "\"degraded\":false}"
            "],\"upstreams\":["
            "{\"name\":\"\",\"give_up_after\":\"0.06s\","
            "\"give_up_learned\":true,\"give_up_fallbacks\":6},"
            "{\"name\":\"profiles\",\"give_up_after\":\"0s\","
            "\"give_up_learned\":false,\"give_up_fallbacks\":0}"
            "]}\n");
}

TEST(FormatStatsJsonTest, NonFiniteNumbersBecomeNull) {
  SidecarStats stats;
  stats.amplification = std::numeric_limits<double>::quiet_NaN();
  stats.hedge_credits = std::numeric_limits<double>::infinity();
  EXPECT_THAT(FormatStatsJson(stats),
              HasSubstr("\"amplification\":null,\"hedge_credits\":null,"
                        "\"replicas\":[],\"upstreams\":[]}"));
}

}  // namespace
}  // namespace tailgate::cli
