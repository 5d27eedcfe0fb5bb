// The read door's calls and services, in-process (read_door_fixture.h):
// answers, failures, deadlines, cancels, admission, drain, health, and the
// send timeout. What a hostile client sends: read_door_abuse_test.cc.

#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.pb.h"
#include "server/read_door/read_door_fixture.h"
#include "server/testing/raw_h2_frames.h"

namespace tailgate::server::read_door {
namespace {

using ::tailgate::server::testing::AsyncRead;
using ::tailgate::server::testing::ConnectToLoopback;
using ::tailgate::server::testing::DoorHarness;
using ::tailgate::server::testing::FakeLoopEngine;
using ::tailgate::server::testing::ReadCallWithWindowShut;
using ::tailgate::server::testing::SendAll;
using ::tailgate::server::testing::WaitForFrame;
using ::tailgate::server::testing::WaitForReset;

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

}  // namespace
}  // namespace tailgate::server::read_door
