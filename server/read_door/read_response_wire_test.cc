#include "server/read_door/read_response_wire.h"

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.pb.h"
#include "server/read/read_descriptor.h"

namespace tailgate::server::read_door {
namespace {

// The wire encoding parses back to what FillReadResponse builds, and is the
// same bytes protobuf writes for it.
void ExpectSameAsTheMessage(const hedge::EngineResponse& response) {
  v1::ReadResponse expected;
  FillReadResponse(response, &expected);
  std::string wire = "prefix";
  AppendReadResponse(response, &wire);
  ASSERT_EQ(wire.substr(0, 6), "prefix");
  v1::ReadResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire.substr(6)));
  EXPECT_EQ(parsed.DebugString(), expected.DebugString());
  EXPECT_TRUE(parsed.has_trace());
  EXPECT_TRUE(parsed.trace().has_latency());
  EXPECT_EQ(wire.substr(6), expected.SerializeAsString());
}

TEST(ReadResponseWireTest, TypicalAnswer) {
  hedge::EngineResponse response;
  response.status = 200;
  response.headers = {{"content-type", "text/plain"},
                      {"content-length", "16"},
                      {"etag", "\"5f3-1a\""},
                      {"x-empty", ""}};
  response.body = "0123456789abcdef";
  response.trace = {.attempts = 2,
                    .hedged = true,
                    .hedge_won = true,
                    .replica = "http://127.0.0.1:8081",
                    .latency = absl::Microseconds(7421)};
  ExpectSameAsTheMessage(response);
}

TEST(ReadResponseWireTest, EmptyAndZeroFieldsAreLeftOut) {
  hedge::EngineResponse response;  // status 0, no headers, no body
  ExpectSameAsTheMessage(response);
  response.status = 204;
  ExpectSameAsTheMessage(response);
}

TEST(ReadResponseWireTest, LongFieldsAndMultiByteLengths) {
  hedge::EngineResponse response;
  response.status = 503;
  response.body = std::string(3 << 20, '\xff');  // a 3-byte length
  response.headers.push_back({"x-long", std::string(300, 'v')});
  response.trace.attempts = 1;
  response.trace.replica = "r\xc3\xa9plica";
  response.trace.latency = absl::Seconds(1234) + absl::Nanoseconds(999999999);
  ExpectSameAsTheMessage(response);
}

TEST(ReadResponseWireTest, NegativeValuesAsProtobufWritesThem) {
  hedge::EngineResponse response;
  response.status = -1;  // never from the engine, but an int32 all the same
  response.trace.latency = -absl::Milliseconds(1500);
  ExpectSameAsTheMessage(response);
}

}  // namespace
}  // namespace tailgate::server::read_door
