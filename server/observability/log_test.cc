#include "server/observability/log.h"

#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

absl::Time FixedNow() {
  return absl::FromUnixMicros(1714564800123456);  // 2024-05-01T12:00:00.123456Z
}

TEST(LoggerTest, LogfmtLineHasTimestampLevelEventAndFieldsInOrder) {
  Logger log(LogFormat::kLogfmt, -1, &FixedNow);
  EXPECT_EQ(log.Format("info", "listening",
                       {{"service", "grpc"}, {"addr", "127.0.0.1:8080"}}),
            "ts=2024-05-01T12:00:00.123456Z level=info event=listening "
            "service=grpc addr=127.0.0.1:8080");
}

TEST(LoggerTest, LogfmtQuotesValuesThatNeedIt) {
  Logger log(LogFormat::kLogfmt, -1, &FixedNow);
  EXPECT_EQ(log.Format("warn", "e",
                       {{"empty", ""},
                        {"space", "a b"},
                        {"eq", "a=b"},
                        {"quote", "say \"hi\"\n"}}),
            "ts=2024-05-01T12:00:00.123456Z level=warn event=e empty=\"\" "
            "space=\"a b\" eq=\"a=b\" quote=\"say \\\"hi\\\"\\n\"");
}

TEST(LoggerTest, FieldsConvertNumbersBoolsAndDurations) {
  Logger log(LogFormat::kLogfmt, -1, &FixedNow);
  EXPECT_EQ(log.Format("info", "e",
                       {{"n", 3},
                        {"u", uint64_t{18446744073709551615u}},
                        {"f", 0.25},
                        {"b", true},
                        {"d", absl::Milliseconds(25)},
                        {"s", "text"}}),
            "ts=2024-05-01T12:00:00.123456Z level=info event=e n=3 "
            "u=18446744073709551615 f=0.25 b=true d=25ms s=text");
}

TEST(LoggerTest, JsonLineIsOneObjectWithEscapedStrings) {
  Logger log(LogFormat::kJson, -1, &FixedNow);
  EXPECT_EQ(log.Format("error", "bind", {{"addr", "a\"b\\c\x01"}}),
            "{\"ts\":\"2024-05-01T12:00:00.123456Z\",\"level\":\"error\","
            "\"event\":\"bind\",\"addr\":\"a\\\"b\\\\c\\u0001\"}");
}

TEST(LoggerTest, WritesOneNewlineTerminatedLinePerEvent) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  Logger log(LogFormat::kLogfmt, fds[1], &FixedNow);
  log.Info("drain_start", {{"in_flight", 2}});
  log.Info("drain_end", {{"in_flight", 0}});
  close(fds[1]);
  std::string got;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) got.append(buf, n);
  close(fds[0]);
  EXPECT_EQ(got,
            "ts=2024-05-01T12:00:00.123456Z level=info event=drain_start "
            "in_flight=2\n"
            "ts=2024-05-01T12:00:00.123456Z level=info event=drain_end "
            "in_flight=0\n");
}

}  // namespace
}  // namespace tailgate::server
