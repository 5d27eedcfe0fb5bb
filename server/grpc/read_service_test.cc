#include "server/grpc/read_service.h"

#include <grpc/support/time.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/testing/async_read.h"
#include "server/testing/fake_engine.h"

namespace tailgate::server {
namespace {

using ::tailgate::hedge::ReadFailure;
using ::tailgate::server::testing::AsyncRead;
using ::tailgate::server::testing::FakeEngine;

absl::Status Failure(ReadFailure failure, absl::string_view message) {
  return hedge::ReadFailureStatus(failure, message);
}

constexpr absl::Duration kTimeout = absl::Seconds(1);
constexpr absl::Duration kWait = absl::Seconds(10);

hedge::EngineResponse Answer(int status, std::string body) {
  hedge::EngineResponse response;
  response.status = status;
  response.headers = {{"Content-Type", "text/plain"}};
  response.body = std::move(body);
  response.trace.attempts = 2;
  response.trace.hedged = true;
  response.trace.hedge_won = true;
  response.trace.replica = "http://127.0.0.1:8002";
  response.trace.latency = absl::Milliseconds(31);
  return response;
}

// The service with its response limits: `kMaxCalls` calls in service,
// `kMaxBytes` of answers waiting to be sent.
template <int64_t kMaxCalls, int64_t kMaxBytes>
class ReadServiceFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::HedgedRead::NewStub(
        server_->InProcessChannel(grpc::ChannelArguments()));
  }

  void TearDown() override {
    server_->Shutdown();
    EXPECT_EQ(gate_.in_flight(), 0);
    EXPECT_EQ(memory_.calls(), 0);
    EXPECT_EQ(memory_.held_bytes(), 0);
  }

  std::unique_ptr<AsyncRead> Start(const char* path = "/item?id=7") {
    auto call = std::make_unique<AsyncRead>();
    call->request.set_path(path);
    call->Start(*stub_);
    return call;
  }

  // Completes read `id` from a thread of its own, as the engine loop does.
  void CompleteFromLoop(uint64_t id,
                        absl::StatusOr<hedge::EngineResponse> result) {
    std::thread loop([&] { EXPECT_TRUE(engine_.Complete(id, result)); });
    loop.join();
  }

  FakeEngine engine_;
  DrainGate gate_;
  Rejections rejections_;
  ResponseMemory memory_{kMaxCalls, kMaxBytes};
  // The reaper runs only when a test calls ReapExpired.
  StalledCalls stalled_{absl::Seconds(5), absl::ZeroDuration()};
  ReadCore core_{engine_,
                 gate_,
                 rejections_,
                 memory_,
                 {.timeout = kTimeout, .send_timeout = absl::Seconds(5)}};
  ReadService service_{core_, stalled_};
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::HedgedRead::Stub> stub_;
};

using ReadServiceTest = ReadServiceFixture<1000, 1 << 20>;
using ReadServiceLimitsTest = ReadServiceFixture<2, 4096>;

TEST_F(ReadServiceTest, SubmitsTheReadAndReturnsTheEngineAnswer) {
  std::unique_ptr<AsyncRead> call = Start();
  ASSERT_TRUE(engine_.WaitForSubmitted(1, kWait));
  const hedge::EngineRead read = engine_.submitted()[0];
  EXPECT_EQ(read.target, "/item?id=7");
  EXPECT_FALSE(read.head);
  EXPECT_EQ(gate_.in_flight(), 1);

  CompleteFromLoop(1, Answer(200, "hello"));
  ASSERT_TRUE(call->Wait());
  ASSERT_TRUE(call->status.ok()) << call->status.error_message();
  EXPECT_EQ(call->response.status(), 200);
  EXPECT_EQ(call->response.body(), "hello");
  ASSERT_EQ(call->response.headers_size(), 1);
  EXPECT_EQ(call->response.headers(0).name(), "Content-Type");
  EXPECT_EQ(call->response.trace().attempts(), 2u);
  EXPECT_TRUE(call->response.trace().hedge_won());
  EXPECT_EQ(call->response.trace().replica(), "http://127.0.0.1:8002");
  EXPECT_EQ(call->response.trace().latency().nanos(), 31'000'000);
  EXPECT_EQ(gate_.WaitForIdle(kWait), 0);
}

TEST_F(ReadServiceTest, UpstreamErrorStatusIsAnOkCall) {
  std::unique_ptr<AsyncRead> call = Start();
  ASSERT_TRUE(engine_.WaitForSubmitted(1, kWait));
  CompleteFromLoop(1, Answer(503, "busy"));
  ASSERT_TRUE(call->Wait());
  EXPECT_TRUE(call->status.ok());
  EXPECT_EQ(call->response.status(), 503);
}

TEST_F(ReadServiceTest, EngineErrorsKeepTheirCodeAndMessage) {
  const absl::Status errors[] = {
      Failure(ReadFailure::kDeadlineExceeded, "deadline exceeded"),
      Failure(ReadFailure::kNoReplica, "no eligible replica"),
      Failure(ReadFailure::kTooLarge, "response larger than 4194304 bytes"),
  };
  for (uint64_t i = 0; i < 3; ++i) {
    std::unique_ptr<AsyncRead> call = Start();
    ASSERT_TRUE(engine_.WaitForSubmitted(i + 1, kWait));
    CompleteFromLoop(i + 1, errors[i]);
    ASSERT_TRUE(call->Wait());
    EXPECT_EQ(static_cast<int>(call->status.error_code()),
              static_cast<int>(errors[i].code()));
    EXPECT_EQ(call->status.error_message(), errors[i].message());
  }
}

TEST_F(ReadServiceTest, CallWithoutDeadlineLeavesTheCapToTheEngine) {
  // The engine caps every read at its --timeout, and must see that the
  // timeout, not the caller, set the deadline.
  std::unique_ptr<AsyncRead> call = Start();
  ASSERT_TRUE(engine_.WaitForSubmitted(1, kWait));
  EXPECT_EQ(engine_.submitted()[0].deadline, absl::InfiniteFuture());
  CompleteFromLoop(1, Answer(200, ""));
  ASSERT_TRUE(call->Wait());
}

TEST_F(ReadServiceTest, ShorterCallDeadlineIsMappedOntoTheEngineClock) {
  auto call = std::make_unique<AsyncRead>();
  call->request.set_path("/");
  call->context.set_deadline(
      absl::ToChronoTime(absl::Now() + absl::Milliseconds(300)));
  call->Start(*stub_);
  ASSERT_TRUE(engine_.WaitForSubmitted(1, kWait));
  const absl::Duration left =
      engine_.submitted()[0].deadline - engine_.clock().Now();
  // gRPC sends the timeout rounded up, so allow a little over.
  EXPECT_GT(left, absl::Milliseconds(50));
  EXPECT_LE(left, absl::Milliseconds(310));
  CompleteFromLoop(
      1, Failure(ReadFailure::kDeadlineExceeded, "deadline exceeded"));
  ASSERT_TRUE(call->Wait());
}

TEST_F(ReadServiceTest, AFarFutureDeadlineIsNotTakenForAPastOne) {
  auto call = std::make_unique<AsyncRead>();
  call->request.set_path("/");
  // A grpc-timeout of 2 100 000 hours: past what a system_clock time_point
  // can hold once added to now.
  gpr_timespec far = gpr_now(GPR_CLOCK_REALTIME);
  far.tv_sec += int64_t{2'100'000} * 3600;
  call->context.set_deadline(far);
  call->Start(*stub_);
  ASSERT_TRUE(engine_.WaitForSubmitted(1, kWait));
  EXPECT_GT(engine_.submitted()[0].deadline - engine_.clock().Now(),
            absl::Hours(2'000'000));
  CompleteFromLoop(1, Answer(200, ""));
  ASSERT_TRUE(call->Wait());
  EXPECT_TRUE(call->status.ok()) << call->status.error_message();
}

TEST_F(ReadServiceTest, InvalidDescriptorNeverReachesTheEngine) {
  std::unique_ptr<AsyncRead> call = Start("no-slash");
  ASSERT_TRUE(call->Wait());
  EXPECT_EQ(call->status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(call->status.error_message().rfind("path ", 0), 0u)
      << call->status.error_message();
  EXPECT_TRUE(engine_.submitted().empty());
  EXPECT_EQ(rejections_.Snapshot().invalid_argument, 1u);
}

TEST_F(ReadServiceTest, UnknownUpstreamIsNotFoundAndCounted) {
  engine_.RefuseWith(
      Failure(ReadFailure::kUnknownUpstream, "unknown upstream \"blue\""));
  std::unique_ptr<AsyncRead> call = Start();
  ASSERT_TRUE(call->Wait());
  EXPECT_EQ(call->status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(call->status.error_message(), "unknown upstream \"blue\"");
  EXPECT_EQ(rejections_.Snapshot().unknown_upstream, 1u);
}

TEST_F(ReadServiceTest, OverloadIsResourceExhaustedAndLeftToTheEngineCount) {
  engine_.RefuseWith(Failure(ReadFailure::kOverloaded, "too many reads"));
  std::unique_ptr<AsyncRead> call = Start();
  ASSERT_TRUE(call->Wait());
  EXPECT_EQ(call->status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  const RejectionSnapshot rejections = rejections_.Snapshot();
  EXPECT_EQ(rejections.invalid_argument + rejections.unknown_upstream +
                rejections.draining,
            0u);
}

TEST_F(ReadServiceTest, DrainingRefusesNewReadsWithUnavailable) {
  gate_.StartDrain();
  std::unique_ptr<AsyncRead> call = Start();
  ASSERT_TRUE(call->Wait());
  EXPECT_EQ(call->status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(call->status.error_message(), "server is draining");
  EXPECT_TRUE(engine_.submitted().empty());
  EXPECT_EQ(rejections_.Snapshot().draining, 1u);
}

TEST_F(ReadServiceTest, DrainWaitsForReadsAlreadyAdmitted) {
  std::unique_ptr<AsyncRead> call = Start();
  ASSERT_TRUE(engine_.WaitForSubmitted(1, kWait));
  gate_.StartDrain();
  EXPECT_EQ(gate_.WaitForIdle(absl::Milliseconds(20)), 1);
  CompleteFromLoop(1, Answer(200, "late"));
  EXPECT_EQ(gate_.WaitForIdle(kWait), 0);
  ASSERT_TRUE(call->Wait());
  EXPECT_TRUE(call->status.ok());
}

TEST_F(ReadServiceTest, ClientCancelCancelsTheEngineRead) {
  std::unique_ptr<AsyncRead> call = Start();
  ASSERT_TRUE(engine_.WaitForSubmitted(1, kWait));
  call->context.TryCancel();
  ASSERT_TRUE(call->Wait());
  EXPECT_EQ(call->status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(gate_.WaitForIdle(kWait), 0);
  EXPECT_EQ(engine_.cancelled(), std::vector<uint64_t>{1});
  EXPECT_TRUE(engine_.pending_ids().empty());
}

TEST_F(ReadServiceTest, ACancelAtTheDeadlineIsLeftToTheEngineDeadline) {
  // The client's deadline passes: gRPC cancels the call on both sides. The
  // engine's deadline for the read is the same instant, so the read must end
  // as DEADLINE_EXCEEDED from the engine, counted as a timeout, not be
  // cancelled as if the caller had changed its mind.
  auto call = std::make_unique<AsyncRead>();
  call->request.set_path("/");
  call->context.set_deadline(
      absl::ToChronoTime(absl::Now() + absl::Milliseconds(100)));
  call->Start(*stub_);
  ASSERT_TRUE(engine_.WaitForSubmitted(1, kWait));
  ASSERT_TRUE(call->Wait());
  EXPECT_EQ(call->status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  CompleteFromLoop(
      1, Failure(ReadFailure::kDeadlineExceeded, "deadline exceeded"));
  EXPECT_EQ(gate_.WaitForIdle(kWait), 0);  // OnCancel, if any, ran before
  EXPECT_TRUE(engine_.cancelled().empty());
}

TEST_F(ReadServiceTest, CompletionBeforeSubmitReturnsIsDelivered) {
  engine_.CompleteOnSubmit(Answer(200, "fast"));
  std::unique_ptr<AsyncRead> call = Start();
  ASSERT_TRUE(call->Wait());
  ASSERT_TRUE(call->status.ok());
  EXPECT_EQ(call->response.body(), "fast");
  EXPECT_EQ(gate_.WaitForIdle(kWait), 0);
}

// Completion on the "loop" thread races the client's cancel; each call must
// end exactly once (a second Finish aborts gRPC) and release its slot.
TEST_F(ReadServiceTest, CancelRacingCompletionFinishesEachCallOnce) {
  constexpr int kCalls = 200;
  std::vector<std::unique_ptr<AsyncRead>> calls;
  for (int i = 0; i < kCalls; ++i) calls.push_back(Start());
  ASSERT_TRUE(engine_.WaitForSubmitted(kCalls, kWait));

  std::thread loop([&] {
    for (uint64_t id = 1; id <= kCalls; ++id) {
      engine_.Complete(id, Answer(200, "raced"));
    }
  });
  for (auto& call : calls) call->context.TryCancel();
  loop.join();

  for (auto& call : calls) {
    ASSERT_TRUE(call->Wait());
    const grpc::StatusCode code = call->status.error_code();
    EXPECT_TRUE(code == grpc::StatusCode::OK ||
                code == grpc::StatusCode::CANCELLED)
        << code;
  }
  EXPECT_EQ(gate_.WaitForIdle(kWait), 0);
  EXPECT_TRUE(engine_.pending_ids().empty());
}

// A read stays counted until its call is over, not only until the engine
// answers: with max_calls 2 in service, the third is refused at once.
TEST_F(ReadServiceLimitsTest, CallsInServiceAreCappedUntilOnDone) {
  std::unique_ptr<AsyncRead> first = Start();
  std::unique_ptr<AsyncRead> second = Start();
  ASSERT_TRUE(engine_.WaitForSubmitted(2, kWait));
  std::unique_ptr<AsyncRead> third = Start();
  ASSERT_TRUE(third->Wait());
  EXPECT_EQ(third->status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(third->status.error_message(),
            "too many reads in flight (max_requests)");
  EXPECT_EQ(rejections_.Snapshot().too_many_calls, 1u);
  EXPECT_EQ(engine_.submitted().size(), 2u);  // never reached the engine
  CompleteFromLoop(1, Answer(200, "a"));
  CompleteFromLoop(2, Answer(200, "b"));
  ASSERT_TRUE(first->Wait());
  ASSERT_TRUE(second->Wait());
  EXPECT_EQ(gate_.WaitForIdle(kWait), 0);
  std::unique_ptr<AsyncRead> fourth = Start();
  ASSERT_TRUE(engine_.WaitForSubmitted(3, kWait));
  CompleteFromLoop(3, Answer(200, "d"));
  ASSERT_TRUE(fourth->Wait());
  EXPECT_TRUE(fourth->status.ok());
}

// An answer that would take the bytes waiting to be sent over the cap is
// dropped with RESOURCE_EXHAUSTED, not kept.
TEST_F(ReadServiceLimitsTest, AnAnswerOverTheBufferCapIsDroppedAndCounted) {
  std::unique_ptr<AsyncRead> call = Start();
  ASSERT_TRUE(engine_.WaitForSubmitted(1, kWait));
  CompleteFromLoop(1, Answer(200, std::string(4096, 'x')));
  ASSERT_TRUE(call->Wait());
  EXPECT_EQ(call->status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(call->status.error_message(),
            "answers waiting to be sent are at the sidecar's "
            "max_buffered_bytes (4096)");
  EXPECT_EQ(rejections_.Snapshot().dropped_buffer_full, 1u);
  // Just under the cap is sent, and released once the call is over.
  std::unique_ptr<AsyncRead> small = Start();
  ASSERT_TRUE(engine_.WaitForSubmitted(2, kWait));
  CompleteFromLoop(2, Answer(200, std::string(3000, 'y')));
  ASSERT_TRUE(small->Wait());
  EXPECT_TRUE(small->status.ok());
  EXPECT_EQ(small->response.body().size(), 3000u);
  EXPECT_EQ(gate_.WaitForIdle(kWait), 0);
  EXPECT_EQ(memory_.held_bytes(), 0);
  EXPECT_GT(memory_.peak_held_bytes(), 3000);
}

}  // namespace
}  // namespace tailgate::server
