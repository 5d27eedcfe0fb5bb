#include "server/read_door/grpc_wire.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace tailgate::server::read_door {
namespace {

std::string Framed(absl::string_view message) {
  std::string out(kMessagePrefixBytes, '\0');
  PutMessagePrefix(static_cast<uint32_t>(message.size()), out.data());
  out.append(message.data(), message.size());
  return out;
}

TEST(ParseGrpcTimeoutTest, EveryUnit) {
  EXPECT_EQ(*ParseGrpcTimeout("2H"), absl::Hours(2));
  EXPECT_EQ(*ParseGrpcTimeout("3M"), absl::Minutes(3));
  EXPECT_EQ(*ParseGrpcTimeout("4S"), absl::Seconds(4));
  EXPECT_EQ(*ParseGrpcTimeout("250m"), absl::Milliseconds(250));
  EXPECT_EQ(*ParseGrpcTimeout("7u"), absl::Microseconds(7));
  EXPECT_EQ(*ParseGrpcTimeout("99999999n"), absl::Nanoseconds(99999999));
  EXPECT_EQ(*ParseGrpcTimeout("0m"), absl::ZeroDuration());
}

TEST(ParseGrpcTimeoutTest, RefusesWhatTheSpecDoesNotAllow) {
  for (absl::string_view bad :
       {"", "m", "123456789S", "1x", "-1S", "1.5S", " 1S", "1 S"}) {
    absl::StatusOr<absl::Duration> timeout = ParseGrpcTimeout(bad);
    EXPECT_EQ(timeout.status().code(), absl::StatusCode::kInvalidArgument)
        << "\"" << bad << "\"";
    EXPECT_NE(timeout.status().message().find("grpc-timeout"),
              absl::string_view::npos);
  }
}

TEST(UnaryMessageTest, OneMessage) {
  EXPECT_EQ(*UnaryMessage(Framed("abc")), "abc");
  EXPECT_EQ(*UnaryMessage(Framed("")), "");
  const std::string big(70000, 'x');
  EXPECT_EQ(*UnaryMessage(Framed(big)), big);
}

TEST(UnaryMessageTest, RefusesAnythingElse) {
  EXPECT_EQ(UnaryMessage("").status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(UnaryMessage(absl::string_view("\0\0\0", 3)).status().code(),
            absl::StatusCode::kInternal);
  std::string cut = Framed("abcdef");
  cut.pop_back();
  EXPECT_EQ(UnaryMessage(cut).status().message(),
            "the request's message is cut short");
  EXPECT_EQ(UnaryMessage(Framed("a") + Framed("b")).status().message(),
            "a unary request carries more than one message");
  std::string compressed = Framed("abc");
  compressed[0] = 1;
  EXPECT_EQ(UnaryMessage(compressed).status().code(),
            absl::StatusCode::kUnimplemented);
}

TEST(MessagePrefixTest, BigEndianLength) {
  char prefix[kMessagePrefixBytes];
  PutMessagePrefix(0x01020304, prefix);
  EXPECT_EQ(prefix[0], 0);
  EXPECT_EQ(prefix[1], 1);
  EXPECT_EQ(prefix[4], 4);
  EXPECT_EQ(MessageLength(absl::string_view(prefix, sizeof(prefix))),
            0x01020304u);
  PutMessagePrefix(0xfffffffe, prefix);
  EXPECT_EQ(MessageLength(absl::string_view(prefix, sizeof(prefix))),
            0xfffffffeu);
}

TEST(PercentEncodeTest, OnlyWhatTheSpecAsks) {
  EXPECT_EQ(PercentEncode("plain text: ok"), "plain text: ok");
  EXPECT_EQ(PercentEncode("100%"), "100%25");
  EXPECT_EQ(PercentEncode("a\nb\r\x7f"), "a%0Ab%0D%7F");
  EXPECT_EQ(PercentEncode("\xc3\xa9"), "%C3%A9");
}

}  // namespace
}  // namespace tailgate::server::read_door
