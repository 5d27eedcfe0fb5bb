// The read door (the loop front) in-process: the real ReadDoor, served on a
// FakeLoopEngine's loop, driven over loopback by a grpc++ channel (and by
// raw HTTP/2 frames where a client must misbehave: hold its flow-control
// window shut). The engine's side of every read is the test's: it sees what
// the door submitted and answers, fails or waits for the door to cancel it.

#include "server/read_door/read_door.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/read/drain.h"
#include "server/read/read_call.h"
#include "server/read/rejections.h"
#include "server/read/response_memory.h"
#include "server/services/serving_state.h"
#include "server/testing/async_read.h"
#include "server/testing/door_harness.h"
#include "server/testing/fake_loop_engine.h"
#include "server/testing/raw_grpc.h"

namespace tailgate::server::read_door {
namespace {

using ::tailgate::server::testing::AsyncRead;
using ::tailgate::server::testing::ConnectToLoopback;
using ::tailgate::server::testing::DoorHarness;
using ::tailgate::server::testing::FakeLoopEngine;
using ::tailgate::server::testing::SendAll;

constexpr absl::Duration kWait = DoorHarness::kWait;

// A Read call started on `stub` for `path`.
std::unique_ptr<AsyncRead> StartRead(v1::HedgedRead::Stub& stub,
                                     const std::string& path) {
  auto call = std::make_unique<AsyncRead>();
  call->request.set_path(path);
  call->context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::seconds(30));
  call->Start(stub);
  return call;
}

class ReadDoorTest : public ::testing::Test {
 protected:
  // Starts the engine, the core and the door (serving health and
  // reflection); `max_calls` and `max_bytes` are the core's --max_requests
  // and --max_buffered_bytes, options.send_timeout its --send_timeout too.
  void Start(int64_t max_calls = 64, int64_t max_bytes = 1 << 20,
             ReadDoorOptions options = {}) {
    ASSERT_TRUE(
        harness_.Start(max_calls, max_bytes, options.send_timeout).ok());
    engine_ = &harness_.engine();
    memory_ = &harness_.memory();
    absl::StatusOr<ListenAddress> address = ParseListenAddress("127.0.0.1:0");
    ASSERT_TRUE(address.ok()) << address.status();
    options.address = *address;
    options.serving_state = &serving_;
    absl::StatusOr<std::unique_ptr<ReadDoor>> door =
        ReadDoor::Start(options, harness_.core(), harness_.engine());
    ASSERT_TRUE(door.ok()) << door.status();
    door_ = *std::move(door);
    port_ = door_->address().port;
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::HedgedRead::NewStub(channel_);
  }

  void TearDown() override {
    stub_.reset();
    channel_.reset();
    door_.reset();
    harness_.Stop();
  }

  FakeLoopEngine::Submitted Read(size_t index) { return harness_.Read(index); }
  bool WaitForNoCalls() { return harness_.WaitForNoCalls(); }

  // The serving status Health/Check reports for `service`; -1 on error.
  int Check(const std::string& service) {
    absl::StatusOr<int> status = testing::HealthCheck(channel_, service);
    EXPECT_TRUE(status.ok()) << status.status();
    return status.value_or(-1);
  }

  services::ServingState serving_{true};
  DoorHarness harness_;
  FakeLoopEngine* engine_ = nullptr;
  ResponseMemory* memory_ = nullptr;
  Rejections& rejections_ = harness_.rejections();
  DrainGate& gate_ = harness_.gate();
  std::unique_ptr<ReadDoor> door_;
  int port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::HedgedRead::Stub> stub_;
};

TEST_F(ReadDoorTest, AnswersAReadWithStatusBodyHeadersAndTrace) {
  Start();
  auto call = std::make_unique<AsyncRead>();
  call->request.set_path("/item?id=7");
  call->request.set_method(v1::METHOD_HEAD);
  call->request.set_tenant("blue");
  v1::Header* accept = call->request.add_headers();
  accept->set_name("Accept");
  accept->set_value("text/plain");
  call->Start(*stub_);

  FakeLoopEngine::Submitted read = Read(0);
  EXPECT_TRUE(read.on_loop_thread);
  EXPECT_EQ(read.read.target, "/item?id=7");
  EXPECT_TRUE(read.read.head);
  EXPECT_EQ(read.read.tenant, "blue");
  bool accept_forwarded = false;
  for (const hygiene::HttpHeader& header : read.read.headers) {
    accept_forwarded |= header.name == "Accept" && header.value == "text/plain";
  }
  EXPECT_TRUE(accept_forwarded);
  hedge::EngineResponse response =
      DoorHarness::Response(203, "hello from a replica");
  response.headers = {{"Content-Type", "text/plain"}, {"X-Replica", "r2"}};
  response.trace.attempts = 2;
  response.trace.hedged = true;
  response.trace.hedge_won = true;
  response.trace.replica = "http://127.0.0.1:8002";
  response.trace.latency = absl::Milliseconds(12);
  ASSERT_TRUE(engine_->Answer(read.id, std::move(response)));

  ASSERT_TRUE(call->Wait());
  ASSERT_TRUE(call->status.ok()) << call->status.error_message();
  const v1::ReadResponse& got = call->response;
  EXPECT_EQ(got.status(), 203);
  EXPECT_EQ(got.body(), "hello from a replica");
  ASSERT_EQ(got.headers_size(), 2);
  EXPECT_EQ(got.headers(0).name(), "Content-Type");
  EXPECT_EQ(got.headers(0).value(), "text/plain");
  EXPECT_EQ(got.headers(1).name(), "X-Replica");
  EXPECT_EQ(got.trace().attempts(), 2u);
  EXPECT_TRUE(got.trace().hedged());
  EXPECT_TRUE(got.trace().hedge_won());
  EXPECT_EQ(got.trace().replica(), "http://127.0.0.1:8002");
  EXPECT_EQ(got.trace().latency().nanos(), 12000000);
  EXPECT_TRUE(WaitForNoCalls());
  EXPECT_EQ(memory_->held_bytes(), 0);
}

// Each way the engine ends a read, as the gRPC status tailgate.proto gives
// it (read_error.h).
struct FailureCase {
  hedge::ReadFailure failure;
  grpc::StatusCode code;
};

class ReadDoorFailureTest : public ReadDoorTest,
                            public ::testing::WithParamInterface<FailureCase> {
};

TEST_P(ReadDoorFailureTest, MapsTheEnginesFailure) {
  const FailureCase& c = GetParam();
  Start();
  std::unique_ptr<AsyncRead> call = StartRead(*stub_, "/item");
  FakeLoopEngine::Submitted read = Read(0);
  ASSERT_TRUE(engine_->Fail(read.id, c.failure, "the engine says no"));
  ASSERT_TRUE(call->Wait());
  EXPECT_EQ(call->status.error_code(), c.code);
  EXPECT_EQ(call->status.error_message(), "the engine says no");
}

INSTANTIATE_TEST_SUITE_P(
    Failures, ReadDoorFailureTest,
    ::testing::Values(FailureCase{hedge::ReadFailure::kDeadlineExceeded,
                                  grpc::StatusCode::DEADLINE_EXCEEDED},
                      FailureCase{hedge::ReadFailure::kTooLarge,
                                  grpc::StatusCode::RESOURCE_EXHAUSTED},
                      FailureCase{hedge::ReadFailure::kShuttingDown,
                                  grpc::StatusCode::UNAVAILABLE},
                      FailureCase{hedge::ReadFailure::kNoReplica,
                                  grpc::StatusCode::UNAVAILABLE},
                      FailureCase{hedge::ReadFailure::kUpstreamFailure,
                                  grpc::StatusCode::UNAVAILABLE},
                      FailureCase{hedge::ReadFailure::kNoAddress,
                                  grpc::StatusCode::UNAVAILABLE},
                      FailureCase{hedge::ReadFailure::kOverloaded,
                                  grpc::StatusCode::RESOURCE_EXHAUSTED},
                      FailureCase{hedge::ReadFailure::kUnknownUpstream,
                                  grpc::StatusCode::NOT_FOUND}));

TEST_F(ReadDoorTest, AnInvalidDescriptorNeverReachesTheEngine) {
  Start();
  std::unique_ptr<AsyncRead> call = StartRead(*stub_, "no-leading-slash");
  ASSERT_TRUE(call->Wait());
  EXPECT_EQ(call->status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(engine_->submitted().empty());
  EXPECT_EQ(rejections_.Snapshot().invalid_argument, 1u);
}

TEST_F(ReadDoorTest, TheCallsDeadlineIsTheReadsDeadline) {
  Start();
  const absl::Time before = engine_->clock().Now();
  auto timed = std::make_unique<AsyncRead>();
  timed->request.set_path("/timed");
  timed->context.set_deadline(std::chrono::system_clock::now() +
                              std::chrono::milliseconds(2500));
  timed->Start(*stub_);
  FakeLoopEngine::Submitted read = Read(0);
  const absl::Time after = engine_->clock().Now();
  // grpc-timeout carries the time left as the client's cached clock sees
  // it (a few milliseconds either way), and the door maps it onto the
  // engine clock.
  EXPECT_GE(read.read.deadline, before + absl::Milliseconds(2400));
  EXPECT_LE(read.read.deadline, after + absl::Milliseconds(2600));
  ASSERT_TRUE(engine_->Fail(read.id, hedge::ReadFailure::kDeadlineExceeded,
                            "deadline passed"));
  ASSERT_TRUE(timed->Wait());
  EXPECT_EQ(timed->status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);

  // Without a deadline the engine's own --timeout caps the read.
  auto open = std::make_unique<AsyncRead>();
  open->request.set_path("/untimed");
  open->Start(*stub_);
  FakeLoopEngine::Submitted untimed = Read(1);
  EXPECT_EQ(untimed.read.deadline, absl::InfiniteFuture());
  ASSERT_TRUE(engine_->Answer(untimed.id, DoorHarness::Response(200, "ok")));
  ASSERT_TRUE(open->Wait());
  EXPECT_TRUE(open->status.ok()) << open->status.error_message();
}

TEST_F(ReadDoorTest, AClientThatCancelsCancelsItsRead) {
  Start();
  std::unique_ptr<AsyncRead> call = StartRead(*stub_, "/slow");
  FakeLoopEngine::Submitted read = Read(0);
  call->context.TryCancel();
  EXPECT_TRUE(engine_->WaitForCancelled(read.id, kWait));
  ASSERT_TRUE(call->Wait());
  EXPECT_EQ(call->status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(WaitForNoCalls());
  EXPECT_EQ(engine_->pending(), 0u);
}

TEST_F(ReadDoorTest, RefusesTheReadBeyondMaxRequestsAndAdmitsAgainOnceOneEnds) {
  Start(/*max_calls=*/2);
  std::unique_ptr<AsyncRead> first = StartRead(*stub_, "/1");
  FakeLoopEngine::Submitted read1 = Read(0);
  std::unique_ptr<AsyncRead> second = StartRead(*stub_, "/2");
  FakeLoopEngine::Submitted read2 = Read(1);

  std::unique_ptr<AsyncRead> third = StartRead(*stub_, "/3");
  ASSERT_TRUE(third->Wait());
  EXPECT_EQ(third->status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(engine_->submitted().size(), 2u);
  EXPECT_EQ(rejections_.Snapshot().too_many_calls, 1u);

  ASSERT_TRUE(engine_->Answer(read1.id, DoorHarness::Response(200, "one")));
  ASSERT_TRUE(first->Wait());
  EXPECT_EQ(first->response.body(), "one");
  std::unique_ptr<AsyncRead> fourth = StartRead(*stub_, "/4");
  FakeLoopEngine::Submitted read4 = Read(2);
  EXPECT_EQ(read4.read.target, "/4");
  ASSERT_TRUE(engine_->Answer(read2.id, DoorHarness::Response(200, "two")));
  ASSERT_TRUE(engine_->Answer(read4.id, DoorHarness::Response(200, "four")));
  ASSERT_TRUE(second->Wait());
  ASSERT_TRUE(fourth->Wait());
  EXPECT_EQ(second->response.body(), "two");
  EXPECT_EQ(fourth->response.body(), "four");
}

TEST_F(ReadDoorTest, AnAnswerOverTheBufferedBytesIsDropped) {
  Start(/*max_calls=*/64, /*max_bytes=*/4096);
  std::unique_ptr<AsyncRead> call = StartRead(*stub_, "/big");
  FakeLoopEngine::Submitted read = Read(0);
  ASSERT_TRUE(engine_->Answer(
      read.id, DoorHarness::Response(200, std::string(8192, 'x'))));
  ASSERT_TRUE(call->Wait());
  EXPECT_EQ(call->status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(rejections_.Snapshot().dropped_buffer_full, 1u);
}

TEST_F(ReadDoorTest, DrainingRefusesNewReadsAndFinishesThoseInFlight) {
  Start();
  std::unique_ptr<AsyncRead> in_flight = StartRead(*stub_, "/before");
  FakeLoopEngine::Submitted read = Read(0);
  gate_.StartDrain();

  std::unique_ptr<AsyncRead> refused = StartRead(*stub_, "/after");
  ASSERT_TRUE(refused->Wait());
  EXPECT_EQ(refused->status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(engine_->submitted().size(), 1u);
  EXPECT_EQ(rejections_.Snapshot().draining, 1u);

  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "finished")));
  ASSERT_TRUE(in_flight->Wait());
  ASSERT_TRUE(in_flight->status.ok()) << in_flight->status.error_message();
  EXPECT_EQ(in_flight->response.body(), "finished");
  // Every call is over (its slot given back). Not gate_.WaitForIdle: the
  // system abseil's Mutex behind it is invisible to ThreadSanitizer.
  EXPECT_TRUE(WaitForNoCalls());
}

TEST_F(ReadDoorTest, StoppingCancelsReadsInFlightAndAnswersShuttingDown) {
  Start();
  std::unique_ptr<AsyncRead> in_flight = StartRead(*stub_, "/slow");
  FakeLoopEngine::Submitted read = Read(0);
  door_.reset();  // waits for the engine to complete the read
  EXPECT_EQ(engine_->cancelled(), std::vector<uint64_t>{read.id});
  ASSERT_TRUE(in_flight->Wait());
  EXPECT_EQ(in_flight->status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(memory_->calls(), 0);
}

TEST_F(ReadDoorTest, HealthCheckFollowsTheServingState) {
  Start();
  EXPECT_EQ(Check(""), testing::kServing);
  EXPECT_EQ(Check("tailgate.v1.HedgedRead"), testing::kServing);
  EXPECT_EQ(testing::HealthCheck(channel_, "no.such.Service").status().code(),
            absl::StatusCode::kNotFound);
  serving_.Set(false);
  EXPECT_EQ(Check(""), testing::kNotServing);
  EXPECT_EQ(Check("tailgate.v1.HedgedRead"), testing::kNotServing);
  EXPECT_TRUE(engine_->submitted().empty());
}

// A door that stops ends an open health Watch with a status (UNAVAILABLE,
// shutting down) before its connection's GOAWAY, not by dropping the
// socket: the client knows to look elsewhere.
TEST_F(ReadDoorTest, StoppingEndsAnOpenWatchWithAStatus) {
  Start();
  testing::HealthWatch watch(channel_, "tailgate.v1.HedgedRead");
  EXPECT_EQ(watch.Next(kWait).value_or(-1), testing::kServing);
  door_.reset();
  const absl::StatusOr<int> end = watch.Next(kWait);
  ASSERT_FALSE(end.ok());
  EXPECT_EQ(end.status().code(), absl::StatusCode::kUnavailable)
      << end.status();
}

// --- A client that holds its flow-control window shut, in raw HTTP/2. ---

std::string Frame(uint8_t type, uint8_t flags, uint32_t stream,
                  absl::string_view payload) {
  std::string frame;
  const uint32_t length = static_cast<uint32_t>(payload.size());
  frame.push_back(static_cast<char>(length >> 16));
  frame.push_back(static_cast<char>(length >> 8));
  frame.push_back(static_cast<char>(length));
  frame.push_back(static_cast<char>(type));
  frame.push_back(static_cast<char>(flags));
  for (int shift : {24, 16, 8, 0}) {
    frame.push_back(static_cast<char>(stream >> shift));
  }
  frame.append(payload.data(), payload.size());
  return frame;
}

// HPACK: a literal field without indexing, new name, no Huffman coding.
void AppendField(std::string& block, absl::string_view name,
                 absl::string_view value) {
  block.push_back('\0');
  block.push_back(static_cast<char>(name.size()));
  block.append(name.data(), name.size());
  block.push_back(static_cast<char>(value.size()));
  block.append(value.data(), value.size());
}

// The frames of a Read call for `path` on stream 1, after the preface and
// a SETTINGS frame that shuts every stream's window (initial window 0).
std::string ReadCallWithWindowShut(
    const std::string& path,
    absl::string_view content_type = "application/grpc") {
  std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  const char window_zero[] = {0, 4, 0, 0, 0, 0};  // INITIAL_WINDOW_SIZE 0
  out += Frame(0x4, 0, 0, absl::string_view(window_zero, 6));
  std::string block;
  AppendField(block, ":method", "POST");
  AppendField(block, ":scheme", "http");
  AppendField(block, ":path", "/tailgate.v1.HedgedRead/Read");
  AppendField(block, ":authority", "door");
  AppendField(block, "content-type", content_type);
  AppendField(block, "te", "trailers");
  out += Frame(0x1, 0x4, 1, block);  // HEADERS, END_HEADERS
  v1::ReadRequest request;
  request.set_path(path);
  const std::string message = request.SerializeAsString();
  std::string data(5, '\0');
  const uint32_t length = static_cast<uint32_t>(message.size());
  for (int i = 0; i < 4; ++i) {
    data[1 + i] = static_cast<char>(length >> (24 - 8 * i));
  }
  data += message;
  out += Frame(0x0, 0x1, 1, data);  // DATA, END_STREAM
  return out;
}

// Reads frames until one of `type` on `stream`; its payload, or nullopt if
// the connection ends (or nothing comes within kWait) first.
std::optional<std::string> WaitForFrame(int fd, uint8_t type, uint32_t stream) {
  const timeval wait = absl::ToTimeval(kWait);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  std::string in;
  auto fill = [&](size_t n) {
    char buffer[4096];
    while (in.size() < n) {
      const ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
      if (got <= 0) return false;
      in.append(buffer, static_cast<size_t>(got));
    }
    return true;
  };
  while (true) {
    if (!fill(9)) return std::nullopt;
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(in[i]); };
    const size_t length = (byte(0) << 16) | (byte(1) << 8) | byte(2);
    const uint32_t id =
        ((byte(5) & 0x7f) << 24) | (byte(6) << 16) | (byte(7) << 8) | byte(8);
    if (!fill(9 + length)) return std::nullopt;
    if (byte(3) == type && id == stream) return in.substr(9, length);
    in.erase(0, 9 + length);
  }
}

uint32_t Word(absl::string_view bytes, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
  return (uint32_t{byte(at)} << 24) | (byte(at + 1) << 16) |
         (byte(at + 2) << 8) | byte(at + 3);
}

// The error code of the RST_STREAM the door sends for `stream`.
std::optional<uint32_t> WaitForReset(int fd, uint32_t stream) {
  std::optional<std::string> payload =
      WaitForFrame(fd, /*RST_STREAM*/ 0x3, stream);
  if (!payload.has_value() || payload->size() != 4) return std::nullopt;
  return Word(*payload, 0);
}

struct GoAway {
  uint32_t code = 0;
  std::string debug_data;
};

// The GOAWAY the door sends.
std::optional<GoAway> WaitForGoAway(int fd) {
  std::optional<std::string> payload = WaitForFrame(fd, /*GOAWAY*/ 0x7, 0);
  if (!payload.has_value() || payload->size() < 8) return std::nullopt;
  return GoAway{Word(*payload, 4), payload->substr(8)};
}

TEST_F(ReadDoorTest, AnAnswerTheClientDoesNotTakeIsResetAtTheSendTimeout) {
  ReadDoorOptions options;
  options.send_timeout = absl::Milliseconds(200);
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, ReadCallWithWindowShut("/held")));

  FakeLoopEngine::Submitted read = Read(0);
  EXPECT_EQ(read.read.target, "/held");
  ASSERT_TRUE(
      engine_->Answer(read.id, DoorHarness::Response(200, "never taken")));
  // The answer's DATA cannot go: the stream's window is 0.
  EXPECT_EQ(WaitForReset(fd, 1), 0x8u);  // CANCEL
  close(fd);
  EXPECT_EQ(rejections_.Snapshot().dropped_send_timeout, 1u);
  EXPECT_TRUE(WaitForNoCalls());
  EXPECT_EQ(memory_->held_bytes(), 0);
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
  const std::optional<GoAway> goaway = WaitForGoAway(fd);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(goaway->code, 0xbu);  // ENHANCE_YOUR_CALM
  EXPECT_EQ(goaway->debug_data, "header_block_too_large");
  close(fd);
  EXPECT_TRUE(engine_->submitted().empty());

  std::unique_ptr<AsyncRead> next = StartRead(*stub_, "/after");
  FakeLoopEngine::Submitted read = Read(0);
  EXPECT_EQ(read.read.target, "/after");
  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "served")));
  ASSERT_TRUE(next->Wait());
  EXPECT_TRUE(next->status.ok()) << next->status.error_message();
}

// Media types are case-insensitive: "Application/GRPC" is a gRPC call.
TEST_F(ReadDoorTest, AContentTypeInAnyCaseIsGrpc) {
  Start();
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(
      SendAll(fd, ReadCallWithWindowShut("/cased", "Application/GRPC")));
  FakeLoopEngine::Submitted read = Read(0);
  EXPECT_EQ(read.read.target, "/cased");
  close(fd);
  EXPECT_TRUE(engine_->WaitForCancelled(read.id, kWait));
}

// gRPC metadata values may begin or end with a space (printable ASCII),
// which RFC 9113 alone would refuse: the call is served.
TEST_F(ReadDoorTest, MetadataWithSpacesAtEitherEndIsServed) {
  Start();
  AsyncRead call;
  call.context.AddMetadata("x-token", " abc ");
  call.request.set_path("/spaced");
  call.Start(*stub_);
  FakeLoopEngine::Submitted read = Read(0);
  EXPECT_EQ(read.read.target, "/spaced");
  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "ok")));
  ASSERT_TRUE(call.Wait());
  EXPECT_TRUE(call.status.ok()) << call.status.error_message();
  EXPECT_EQ(call.response.body(), "ok");
}

// The preface and the client's SETTINGS, as a client opens a connection.
std::string Preface() {
  return std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + Frame(0x4, 0, 0, "");
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
  const std::optional<GoAway> goaway = WaitForGoAway(fd);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(goaway->code, 0xbu);  // ENHANCE_YOUR_CALM
  EXPECT_EQ(goaway->debug_data, "too_many_pings");
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
  const std::optional<GoAway> goaway = WaitForGoAway(fd);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(goaway->code, 0xbu);
  EXPECT_EQ(goaway->debug_data, "too_many_idle_frames");
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
  const std::optional<GoAway> goaway = WaitForGoAway(fd);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(goaway->code, 0xbu);
  EXPECT_EQ(goaway->debug_data, "too_many_idle_frames");
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

// True once the door has closed `fd` (a read finds its end, nothing but
// frames before it); false if it stays open for kWait.
bool ClosedByTheDoor(int fd) {
  const timeval wait = absl::ToTimeval(kWait);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  char buffer[4096];
  while (true) {
    const ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
    if (got == 0) return true;
    if (got < 0) return errno == ECONNRESET;
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

}  // namespace
}  // namespace tailgate::server::read_door
