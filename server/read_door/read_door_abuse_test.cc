// What a hostile client sends the read door, in-process
// (read_door_fixture.h), in raw HTTP/2: HPACK bombs, ping and frame
// floods, connections held idle at the limit, requests that never end or
// hold a connection's share of the request bytes, reads reset as soon as
// they are sent. Each is cut short, and others are still served.

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "server/read_door/read_door_fixture.h"
#include "server/testing/raw_h2_frames.h"

namespace tailgate::server::read_door {
namespace {

using ::tailgate::server::testing::AppendField;
using ::tailgate::server::testing::AsyncRead;
using ::tailgate::server::testing::ClosedByTheDoor;
using ::tailgate::server::testing::ConnectToLoopback;
using ::tailgate::server::testing::DoorHarness;
using ::tailgate::server::testing::FakeLoopEngine;
using ::tailgate::server::testing::Frame;
using ::tailgate::server::testing::GoAway;
using ::tailgate::server::testing::Preface;
using ::tailgate::server::testing::ReadCallHeaders;
using ::tailgate::server::testing::ReadCallWithWindowShut;
using ::tailgate::server::testing::ReadMessage;
using ::tailgate::server::testing::SendAll;
using ::tailgate::server::testing::WaitForFrame;
using ::tailgate::server::testing::WaitForGoAway;

// The door ends `fd`'s connection with GOAWAY ENHANCE_YOUR_CALM saying
// `debug_data`.
void ExpectEnhanceYourCalm(int fd, absl::string_view debug_data) {
  const std::optional<GoAway> goaway = WaitForGoAway(fd);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(goaway->code, 0xbu);  // ENHANCE_YOUR_CALM
  EXPECT_EQ(goaway->debug_data, debug_data);
}

// An HPACK bomb: one 4000-byte field put in the dynamic table, then
// referenced 3000 times (a byte each, 12 MB decoded) in the same block. The
// connection ends with ENHANCE_YOUR_CALM before the block is decoded, no
// read reaches the engine, and the door serves the next client.
TEST_F(ReadDoorTest, AnHpackBombEndsItsConnectionWithEnhanceYourCalm) {
  Start();
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  out += Frame(0x4, 0, 0, "");  // SETTINGS
  std::string block;
  AppendField(block, ":method", "POST");
  AppendField(block, ":scheme", "http");
  AppendField(block, ":path", "/tailgate.v1.HedgedRead/Read");
  AppendField(block, ":authority", "door");
  // Literal with incremental indexing, new name "x-bomb", a 4000-byte
  // value (its length an HPACK integer: 127 + 3873 in 7-bit groups).
  block += '\x40';
  block += '\x06';
  block += "x-bomb";
  block += '\x7f';
  block += static_cast<char>(0x80 | (3873 & 0x7f));
  block += static_cast<char>(3873 >> 7);
  block += std::string(4000, 'b');
  block += std::string(3000, '\xbe');  // indexed: dynamic entry 62
  out += Frame(0x1, 0x5, 1, block);    // HEADERS, END_HEADERS|END_STREAM
  ASSERT_TRUE(SendAll(fd, out));
  ExpectEnhanceYourCalm(fd, "header_block_too_large");
  close(fd);
  EXPECT_TRUE(engine_->submitted().empty());

  std::unique_ptr<AsyncRead> next = StartRead(*stub_, "/after");
  FakeLoopEngine::Submitted read = Read(0);
  EXPECT_EQ(read.read.target, "/after");
  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "served")));
  ASSERT_TRUE(next->Wait());
  EXPECT_TRUE(next->status.ok()) << next->status.error_message();
}

// gRFC A8: with no call open, a ping sooner than two hours after the last
// is a strike; the third strike ends the connection, "too_many_pings".
TEST_F(ReadDoorTest, KeepalivePingsWithoutCallsEndTheConnection) {
  Start();
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  std::string out = Preface();
  for (int i = 0; i < 4; ++i) out += Frame(0x6, 0, 0, std::string(8, 'p'));
  ASSERT_TRUE(SendAll(fd, out));
  ExpectEnhanceYourCalm(fd, "too_many_pings");
  close(fd);
}

// Three pings are two strikes: the connection stays, and serves.
TEST_F(ReadDoorTest, TwoPingStrikesAreForgiven) {
  Start();
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  std::string out = Preface();
  for (int i = 0; i < 3; ++i) out += Frame(0x6, 0, 0, std::string(8, 'p'));
  ASSERT_TRUE(SendAll(fd, out));
  // The call's own frames, without the 24-byte connection preface.
  ASSERT_TRUE(SendAll(fd, ReadCallWithWindowShut("/after-pings").substr(24)));
  FakeLoopEngine::Submitted read = Read(0);
  EXPECT_EQ(read.read.target, "/after-pings");
  close(fd);
}

// Frames that carry no work beyond the allowance end the connection,
// "too_many_idle_frames", before the door has read them all.
TEST_F(ReadDoorTest, AFloodOfPriorityFramesEndsTheConnection) {
  Start();
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  std::string out = Preface();
  const std::string priority("\0\0\0\0\x10", 5);  // no dependency, weight 17
  for (int i = 0; i < 2000; ++i) out += Frame(0x2, 0, 3, priority);
  ASSERT_TRUE(SendAll(fd, out));
  ExpectEnhanceYourCalm(fd, "too_many_idle_frames");
  close(fd);
}

// Frames of a type HTTP/2 does not define carry no work either.
TEST_F(ReadDoorTest, AFloodOfFramesOfAnUnknownTypeEndsTheConnection) {
  Start();
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  std::string out = Preface();
  for (int i = 0; i < 2000; ++i) out += Frame(0xfa, 0, 0, "x");
  ASSERT_TRUE(SendAll(fd, out));
  ExpectEnhanceYourCalm(fd, "too_many_idle_frames");
  close(fd);
}

// A client that reads a lot on one connection (the gRPC library's, with
// its own pings and window updates) never meets the budget.
TEST_F(ReadDoorTest, ManyReadsOnOneConnectionStayWithinTheBudget) {
  Start();
  for (size_t i = 0; i < 300; ++i) {
    std::unique_ptr<AsyncRead> call = StartRead(*stub_, "/many");
    FakeLoopEngine::Submitted read = Read(i);
    ASSERT_TRUE(engine_->Answer(
        read.id, DoorHarness::Response(200, std::string(20000, 'x'))));
    ASSERT_TRUE(call->Wait());
    ASSERT_TRUE(call->status.ok()) << i << ": " << call->status.error_message();
  }
}

// At the connection limit a new client takes the place of the connection
// that has had no call open the longest, which is told GOAWAY NO_ERROR.
TEST_F(ReadDoorTest, AtTheConnectionLimitTheLongestIdleConnectionGivesWay) {
  ReadDoorOptions options;
  options.max_connections = 2;
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  std::vector<int> idle;
  for (int i = 0; i < 2; ++i) {
    idle.push_back(ConnectToLoopback(port_));
    ASSERT_GE(idle.back(), 0);
    ASSERT_TRUE(SendAll(idle.back(), Preface()));
    // The door's SETTINGS: it holds the connection.
    ASSERT_TRUE(WaitForFrame(idle.back(), /*SETTINGS*/ 0x4, 0).has_value());
  }
  std::unique_ptr<AsyncRead> call = StartRead(*stub_, "/in");
  FakeLoopEngine::Submitted read = Read(0);
  EXPECT_EQ(read.read.target, "/in");
  const std::optional<GoAway> goaway = WaitForGoAway(idle[0]);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(goaway->code, 0u);  // NO_ERROR
  EXPECT_TRUE(ClosedByTheDoor(idle[0]));
  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "in")));
  ASSERT_TRUE(call->Wait());
  EXPECT_TRUE(call->status.ok()) << call->status.error_message();
  for (int fd : idle) close(fd);
}

// With a call open on every connection, a new one is closed at accept.
TEST_F(ReadDoorTest, AtTheConnectionLimitWithCallsOpenANewConnectionIsRefused) {
  std::atomic<uint64_t> refused{0};
  ReadDoorOptions options;
  options.max_connections = 2;
  options.refused = [&refused](uint64_t count) { refused = count; };
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  std::vector<int> busy;
  for (size_t i = 0; i < 2; ++i) {
    busy.push_back(ConnectToLoopback(port_));
    ASSERT_GE(busy.back(), 0);
    ASSERT_TRUE(SendAll(busy.back(), ReadCallWithWindowShut("/busy")));
    Read(i);  // the call is open, its read in flight
  }
  const int third = ConnectToLoopback(port_);
  ASSERT_GE(third, 0);
  EXPECT_TRUE(ClosedByTheDoor(third));
  close(third);
  for (int fd : busy) close(fd);
  EXPECT_EQ(refused.load(), 1u);
}

// A Read call whose request never ends is answered (trailers only,
// DEADLINE_EXCEEDED) at the receive timeout instead of holding its bytes
// and its stream for as long as the client likes; no read is submitted.
TEST_F(ReadDoorTest, ARequestThatNeverEndsIsAnsweredAtTheReceiveTimeout) {
  ReadDoorOptions options;
  options.receive_timeout = absl::Milliseconds(300);
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  std::string out = Preface();
  std::string block;
  AppendField(block, ":method", "POST");
  AppendField(block, ":scheme", "http");
  AppendField(block, ":path", "/tailgate.v1.HedgedRead/Read");
  AppendField(block, ":authority", "door");
  AppendField(block, "content-type", "application/grpc");
  out += Frame(0x1, 0x4, 1, block);  // HEADERS, END_HEADERS: no END_STREAM
  // A message prefix announcing 100 bytes, and 10 of them.
  std::string part("\0\0\0\0\x64", 5);
  part += std::string(10, 'm');
  out += Frame(0x0, 0x0, 1, part);
  ASSERT_TRUE(SendAll(fd, out));
  EXPECT_TRUE(WaitForFrame(fd, /*HEADERS*/ 0x1, 1).has_value());
  EXPECT_TRUE(engine_->submitted().empty());
  close(fd);
}

// Reads reset in the same bytes that carry them (HEADERS, the message,
// RST_STREAM: rapid reset) never reach the engine, so they take no
// admission slot: with --max_requests at 4, 50 of them leave a read on
// another connection its slot.
TEST_F(ReadDoorTest, AReadResetInTheBytesThatCarryItNeverTakesASlot) {
  Start(/*max_calls=*/4);
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  std::string out = Preface();
  for (uint32_t stream = 1; stream < 100; stream += 2) {
    out += Frame(testing::kHeaders, testing::kEndHeaders, stream,
                 ReadCallHeaders());
    out += Frame(testing::kData, testing::kEndStream, stream,
                 ReadMessage("/reset"));
    out += Frame(testing::kRstStream, 0, stream,
                 absl::string_view("\0\0\0\x08", 4));  // CANCEL
  }
  ASSERT_LT(out.size(), 16u << 10);  // one receive of the door
  ASSERT_TRUE(SendAll(fd, out));
  // The connection stays open (50 resets are within nghttp2's rate) and
  // still serves: its next read is the engine's first.
  ASSERT_TRUE(SendAll(fd, Frame(testing::kHeaders, testing::kEndHeaders, 101,
                                ReadCallHeaders()) +
                              Frame(testing::kData, testing::kEndStream, 101,
                                    ReadMessage("/kept"))));
  FakeLoopEngine::Submitted kept = Read(0);
  EXPECT_EQ(kept.read.target, "/kept");
  std::unique_ptr<AsyncRead> call = StartRead(*stub_, "/victim");
  FakeLoopEngine::Submitted victim = Read(1);
  EXPECT_EQ(victim.read.target, "/victim");
  ASSERT_TRUE(engine_->Answer(victim.id, DoorHarness::Response(200, "ok")));
  ASSERT_TRUE(call->Wait());
  EXPECT_TRUE(call->status.ok()) << call->status.error_message();
  EXPECT_EQ(engine_->submitted().size(), 2u);
  close(fd);
}

// One connection holds at most its share of the request bytes: a stream
// whose message would take it past is answered RESOURCE_EXHAUSTED, while
// another connection is served.
TEST_F(ReadDoorTest, AConnectionHoldsAtMostItsShareOfTheRequestBytes) {
  ReadDoorOptions options;
  options.max_message_bytes = 16 << 10;
  options.max_request_bytes = 128 << 10;  // a share of 16 KiB + a call
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  // Messages announced as 12 000 bytes, of which 10 000 come, never ended.
  std::string part("\0\0\0\x2e\xe0", 5);
  part += std::string(10000, 'm');
  std::string out = Preface();
  for (uint32_t stream : {1, 3}) {
    out += Frame(testing::kHeaders, testing::kEndHeaders, stream,
                 ReadCallHeaders());
    out += Frame(testing::kData, 0, stream, part);
  }
  ASSERT_TRUE(SendAll(fd, out));
  // The first fits the share; the second does not, and is answered at
  // once (trailers only), where the door's budget alone would wait for it.
  EXPECT_TRUE(WaitForFrame(fd, testing::kHeaders, 3).has_value());
  std::unique_ptr<AsyncRead> call = StartRead(*stub_, "/other");
  FakeLoopEngine::Submitted read = Read(0);
  EXPECT_EQ(read.read.target, "/other");
  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "ok")));
  ASSERT_TRUE(call->Wait());
  EXPECT_TRUE(call->status.ok()) << call->status.error_message();
  EXPECT_EQ(engine_->submitted().size(), 1u);
  close(fd);
}

// A client that shuts every stream's window and asks for `reads` reads on
// streams 1, 3, 5...
std::string ReadsWithWindowShut(int reads) {
  std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  const char window_zero[] = {0, 4, 0, 0, 0, 0};  // INITIAL_WINDOW_SIZE 0
  out += Frame(testing::kSettings, 0, 0, absl::string_view(window_zero, 6));
  for (int i = 0; i < reads; ++i) {
    const uint32_t stream = 1 + 2 * static_cast<uint32_t>(i);
    out += Frame(testing::kHeaders, testing::kEndHeaders, stream,
                 ReadCallHeaders());
    out += Frame(testing::kData, testing::kEndStream, stream,
                 ReadMessage(absl::StrCat("/shut/", i)));
  }
  return out;
}

// A connection with no call open is told GOAWAY NO_ERROR and closed at the
// idle timeout; one with a call open stays (it answers a PING).
TEST_F(ReadDoorTest, AConnectionWithNoCallOpenIsClosedAtTheIdleTimeout) {
  std::atomic<uint64_t> closed{0};
  ReadDoorOptions options;
  options.idle_timeout = absl::Milliseconds(300);
  options.idle_closed = [&closed](uint64_t count) { closed = count; };
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  const int busy = ConnectToLoopback(port_);
  ASSERT_GE(busy, 0);
  ASSERT_TRUE(SendAll(busy, ReadsWithWindowShut(1)));
  Read(0);  // its call is open
  const int idle = ConnectToLoopback(port_);
  ASSERT_GE(idle, 0);
  ASSERT_TRUE(SendAll(idle, Preface()));
  const std::optional<GoAway> goaway = WaitForGoAway(idle);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(goaway->code, 0u);  // NO_ERROR
  EXPECT_TRUE(ClosedByTheDoor(idle));
  EXPECT_EQ(closed.load(), 1u);
  ASSERT_TRUE(SendAll(busy, Frame(testing::kPing, 0, 0, std::string(8, 'p'))));
  EXPECT_TRUE(WaitForFrame(busy, testing::kPing, 0).has_value());
  close(idle);
  close(busy);
}

// One connection holds at most its share of the reads: the one past it is
// refused (trailers only) while another connection is served.
TEST_F(ReadDoorTest, AConnectionHoldsAtMostItsShareOfTheReads) {
  ReadDoorOptions options;
  options.max_reads_per_connection = 2;
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, ReadsWithWindowShut(3)));
  Read(0);
  Read(1);
  EXPECT_TRUE(WaitForFrame(fd, testing::kHeaders, 5).has_value());
  EXPECT_EQ(engine_->submitted().size(), 2u);
  std::unique_ptr<AsyncRead> call = StartRead(*stub_, "/other");
  FakeLoopEngine::Submitted read = Read(2);
  EXPECT_EQ(read.read.target, "/other");
  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "ok")));
  ASSERT_TRUE(call->Wait());
  EXPECT_TRUE(call->status.ok()) << call->status.error_message();
  close(fd);
}

// A client that takes none of its answers holds at most its share of the
// answer bytes: an answer past it is dropped at once (its bytes back),
// and another connection's answer still fits.
TEST_F(ReadDoorTest, AConnectionThatDoesNotReadHoldsAtMostItsShareOfAnswers) {
  ReadDoorOptions options;
  options.max_answer_bytes_per_connection = 3000;
  Start(/*max_calls=*/64, /*max_bytes=*/5000, options);
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, ReadsWithWindowShut(2)));
  const uint64_t first = Read(0).id, second = Read(1).id;
  ASSERT_TRUE(engine_->Answer(
      first, DoorHarness::Response(200, std::string(2000, 'a'))));
  ASSERT_TRUE(engine_->Answer(
      second, DoorHarness::Response(200, std::string(2000, 'b'))));
  // The second is dropped: trailers only on its stream, the first's bytes
  // alone held.
  EXPECT_TRUE(WaitForFrame(fd, testing::kHeaders, 3).has_value());
  EXPECT_LT(memory_->held_bytes(), 3000);
  std::unique_ptr<AsyncRead> call = StartRead(*stub_, "/other");
  FakeLoopEngine::Submitted read = Read(2);
  ASSERT_TRUE(engine_->Answer(
      read.id, DoorHarness::Response(200, std::string(2000, 'c'))));
  ASSERT_TRUE(call->Wait());
  EXPECT_TRUE(call->status.ok()) << call->status.error_message();
  EXPECT_EQ(call->response.body().size(), 2000u);
  close(fd);
}

}  // namespace
}  // namespace tailgate::server::read_door
