#include "server/read_door/read_response_wire.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.pb.h"
#include "server/read/read_descriptor.h"
#include "server/read_door/grpc_wire.h"

namespace tailgate::server::read_door {
namespace {

// The pieces, copied out, are one gRPC message: its prefix (uncompressed,
// the length of the rest); the rest parses back to what FillReadResponse
// builds, and is the same bytes protobuf writes for it. The body is moved
// into the frame, not copied.
void ExpectSameAsTheMessage(const hedge::EngineResponse& response) {
  v1::ReadResponse expected;
  FillReadResponse(response, &expected);
  const FramedReadResponse framed = FrameReadResponse(response);
  EXPECT_EQ(framed.body, response.body);
  std::string wire(framed.size(), '?');
  ASSERT_EQ(
      framed.CopyOut(0, reinterpret_cast<uint8_t*>(wire.data()), wire.size()),
      wire.size());
  ASSERT_GE(wire.size(), kMessagePrefixBytes);
  EXPECT_EQ(wire[0], 0);
  EXPECT_EQ(MessageLength(wire), wire.size() - kMessagePrefixBytes);
  const std::string message = wire.substr(kMessagePrefixBytes);
  v1::ReadResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(message));
  EXPECT_EQ(parsed.DebugString(), expected.DebugString());
  EXPECT_TRUE(parsed.has_trace());
  EXPECT_TRUE(parsed.trace().has_latency());
  EXPECT_EQ(message, expected.SerializeAsString());
}

// Copied out in pieces of any size, from any offset, the bytes are the
// same as copied out at once; past the end nothing is copied.
TEST(ReadResponseWireTest, CopiesOutInPiecesAcrossTheBody) {
  hedge::EngineResponse response;
  response.status = 200;
  response.headers = {{"etag", "\"1\""}};
  response.body = "0123456789";
  response.trace.replica = "http://127.0.0.1:8081";
  const FramedReadResponse framed = FrameReadResponse(response);
  std::string whole(framed.size(), '?');
  framed.CopyOut(0, reinterpret_cast<uint8_t*>(whole.data()), whole.size());
  for (size_t piece : {1, 3, 7, 64}) {
    std::string pieces;
    uint8_t buffer[64];
    for (size_t n; (n = framed.CopyOut(pieces.size(), buffer, piece)) > 0;) {
      pieces.append(reinterpret_cast<const char*>(buffer), n);
    }
    EXPECT_EQ(pieces, whole) << "pieces of " << piece;
  }
  uint8_t byte;
  EXPECT_EQ(framed.CopyOut(framed.size(), &byte, 1), 0u);
}

TEST(ReadResponseWireTest, TheBodyIsMovedNotCopied) {
  hedge::EngineResponse response;
  response.body = std::string(1 << 20, 'b');
  const char* bytes = response.body.data();
  const FramedReadResponse framed = FrameReadResponse(std::move(response));
  EXPECT_EQ(framed.body.data(), bytes);
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

// The whole message of a framed item, without its prefix.
std::string Message(const FramedReadResponse& framed) {
  std::string wire(framed.size(), '?');
  framed.CopyOut(0, reinterpret_cast<uint8_t*>(wire.data()), wire.size());
  EXPECT_EQ(MessageLength(wire), wire.size() - kMessagePrefixBytes);
  return wire.substr(kMessagePrefixBytes);
}

TEST(ReadResponseWireTest,
     AReadManyItemWithAnAnswerIsTheMessageProtobufWrites) {
  hedge::EngineResponse response;
  response.status = 200;
  response.headers = {{"etag", "\"7\""}};
  response.body = std::string(300, 'b');
  response.trace = {.attempts = 1, .replica = "http://r1"};
  v1::ReadManyItem expected;
  expected.set_index(977);
  FillReadResponse(response, expected.mutable_response());
  const std::string message = Message(FrameReadManyItem(977, response));
  EXPECT_EQ(message, expected.SerializeAsString());
  v1::ReadManyItem parsed;
  ASSERT_TRUE(parsed.ParseFromString(message));
  EXPECT_EQ(parsed.response().body(), response.body);
}

TEST(ReadResponseWireTest, AReadManyItemThatFailedCarriesItsCodeAndMessage) {
  v1::ReadManyItem expected;
  expected.set_index(3);
  expected.set_code(5);
  expected.set_message("no upstream named \"nope\"");
  const std::string message = Message(FrameReadManyFailure(
      3, absl::NotFoundError("no upstream named \"nope\"")));
  EXPECT_EQ(message, expected.SerializeAsString());
  // Index 0 is left out, as protobuf leaves out zeros.
  v1::ReadManyItem first;
  first.set_code(3);
  first.set_message("bad");
  EXPECT_EQ(Message(FrameReadManyFailure(0, absl::InvalidArgumentError("bad"))),
            first.SerializeAsString());
}

}  // namespace
}  // namespace tailgate::server::read_door
