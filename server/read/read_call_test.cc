#include "server/read/read_call.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "hedge/transport/read_failure.h"
#include "server/testing/fake_engine.h"

namespace tailgate::server {
namespace {

using ::tailgate::hedge::ReadFailure;
using ::tailgate::hedge::ReadFailureStatus;

v1::ReadRequest Request(absl::string_view path = "/item?id=1") {
  v1::ReadRequest request;
  request.set_path(std::string(path));
  return request;
}

hedge::EngineResponse Answer(std::string body) {
  hedge::EngineResponse response;
  response.status = 200;
  response.body = std::move(body);
  return response;
}

class ReadCallTest : public ::testing::Test {
 protected:
  // Reads done hand their outcome here.
  ReadDone Record() {
    return [this](ReadOutcome outcome) {
      outcomes_.push_back(std::move(outcome));
    };
  }

  testing::FakeEngine engine_;
  DrainGate gate_;
  Rejections rejections_;
  ResponseMemory memory_{/*max_calls=*/2, /*max_bytes=*/1000};
  ReadCore core_{
      engine_,
      gate_,
      rejections_,
      memory_,
      {.timeout = absl::Seconds(1), .send_timeout = absl::Seconds(5)}};
  std::vector<ReadOutcome> outcomes_;
};

TEST_F(ReadCallTest, AnswerIsHeldUntilFinish) {
  ReadCall call(core_);
  ASSERT_EQ(call.Start(Request(), absl::InfiniteFuture(), Record()),
            std::nullopt);
  EXPECT_EQ(gate_.in_flight(), 1);
  ASSERT_TRUE(engine_.Complete(engine_.pending_ids()[0], Answer("hello")));
  ASSERT_EQ(outcomes_.size(), 1u);
  ASSERT_TRUE(outcomes_[0].answer.has_value());
  EXPECT_EQ(outcomes_[0].answer->body, "hello");
  EXPECT_EQ(call.held_bytes(), AnswerBytes(*outcomes_[0].answer));
  EXPECT_EQ(memory_.held_bytes(), call.held_bytes());
  EXPECT_LT(call.send_deadline(), absl::Now() + absl::Seconds(6));
  call.Finish();
  EXPECT_EQ(memory_.held_bytes(), 0);
  EXPECT_EQ(gate_.in_flight(), 0);
  call.Finish();  // idempotent
  EXPECT_EQ(gate_.in_flight(), 0);
}

TEST_F(ReadCallTest, BadDescriptorIsRefusedTypedAndCounted) {
  ReadCall call(core_);
  std::optional<ReadError> refused =
      call.Start(Request("no-slash"), absl::InfiniteFuture(), Record());
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->end, ReadEnd::kInvalidArgument);
  EXPECT_EQ(refused->status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rejections_.Snapshot().invalid_argument, 1u);
  EXPECT_TRUE(engine_.submitted().empty());
  EXPECT_EQ(gate_.in_flight(), 0);
}

TEST_F(ReadCallTest, DrainingRefuses) {
  gate_.StartDrain();
  ReadCall call(core_);
  std::optional<ReadError> refused =
      call.Start(Request(), absl::InfiniteFuture(), Record());
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->end, ReadEnd::kDraining);
  EXPECT_EQ(refused->status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(rejections_.Snapshot().draining, 1u);
}

TEST_F(ReadCallTest, MaxRequestsRefusesTheCallOverIt) {
  ReadCall first(core_), second(core_), third(core_);
  ASSERT_EQ(first.Start(Request(), absl::InfiniteFuture(), Record()),
            std::nullopt);
  ASSERT_EQ(second.Start(Request(), absl::InfiniteFuture(), Record()),
            std::nullopt);
  std::optional<ReadError> refused =
      third.Start(Request(), absl::InfiniteFuture(), Record());
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->end, ReadEnd::kTooManyCalls);
  EXPECT_EQ(rejections_.Snapshot().too_many_calls, 1u);
  EXPECT_EQ(gate_.in_flight(), 2);
  for (uint64_t id : engine_.pending_ids()) engine_.Complete(id, Answer(""));
}

TEST_F(ReadCallTest, EngineRefusalIsTypedAndNothingIsHeld) {
  engine_.RefuseWith(ReadFailureStatus(ReadFailure::kUnknownUpstream,
                                       "unknown upstream \"x\""));
  ReadCall call(core_);
  std::optional<ReadError> refused =
      call.Start(Request(), absl::InfiniteFuture(), Record());
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->end, ReadEnd::kUnknownUpstream);
  EXPECT_EQ(refused->status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rejections_.Snapshot().unknown_upstream, 1u);
  EXPECT_EQ(gate_.in_flight(), 0);
  EXPECT_TRUE(outcomes_.empty());
}

TEST_F(ReadCallTest, EngineFailureIsTyped) {
  ReadCall call(core_);
  ASSERT_EQ(call.Start(Request(), absl::InfiniteFuture(), Record()),
            std::nullopt);
  engine_.Complete(engine_.pending_ids()[0],
                   ReadFailureStatus(ReadFailure::kTooLarge, "too large"));
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_FALSE(outcomes_[0].answer.has_value());
  EXPECT_EQ(outcomes_[0].error.end, ReadEnd::kTooLarge);
  EXPECT_EQ(outcomes_[0].error.status.code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(ReadCallTest, UntypedEngineStatusIsInternal) {
  ReadCall call(core_);
  ASSERT_EQ(call.Start(Request(), absl::InfiniteFuture(), Record()),
            std::nullopt);
  engine_.Complete(engine_.pending_ids()[0], absl::UnavailableError("?"));
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(outcomes_[0].error.end, ReadEnd::kInternal);
  EXPECT_EQ(outcomes_[0].error.status.code(), absl::StatusCode::kInternal);
}

TEST_F(ReadCallTest, ClientGoneCancels) {
  ReadCall call(core_);
  ASSERT_EQ(call.Start(Request(), absl::InfiniteFuture(), Record()),
            std::nullopt);
  call.ClientGone();
  EXPECT_EQ(engine_.cancelled().size(), 1u);
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(outcomes_[0].error.end, ReadEnd::kCancelled);
}

TEST_F(ReadCallTest, ClientGoneAtItsDeadlineIsLeftToTheDeadline) {
  ReadCall call(core_);
  ASSERT_EQ(
      call.Start(Request(), absl::Now() + kDeadlineCancelSlack / 2, Record()),
      std::nullopt);
  call.ClientGone();
  EXPECT_TRUE(engine_.cancelled().empty());
  engine_.Complete(engine_.pending_ids()[0],
                   ReadFailureStatus(ReadFailure::kDeadlineExceeded, "late"));
}

TEST_F(ReadCallTest, ShutdownIsReportedAsShuttingDownNotAsCancel) {
  ReadCall call(core_);
  ASSERT_EQ(call.Start(Request(), absl::InfiniteFuture(), Record()),
            std::nullopt);
  call.Shutdown();
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(outcomes_[0].error.end, ReadEnd::kShuttingDown);
  EXPECT_EQ(outcomes_[0].error.status.code(), absl::StatusCode::kUnavailable);
}

TEST_F(ReadCallTest, AnswerOverTheBufferIsDroppedAndCounted) {
  ReadCall call(core_);
  ASSERT_EQ(call.Start(Request(), absl::InfiniteFuture(), Record()),
            std::nullopt);
  engine_.Complete(engine_.pending_ids()[0], Answer(std::string(2000, 'x')));
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_FALSE(outcomes_[0].answer.has_value());
  EXPECT_EQ(outcomes_[0].error.end, ReadEnd::kBufferFull);
  EXPECT_EQ(rejections_.Snapshot().dropped_buffer_full, 1u);
  EXPECT_EQ(call.held_bytes(), 0);
}

TEST_F(ReadCallTest, DropUnsentCountsOnce) {
  ReadCall call(core_);
  ASSERT_EQ(call.Start(Request(), absl::InfiniteFuture(), Record()),
            std::nullopt);
  call.DropUnsent();  // no answer yet: nothing to drop
  EXPECT_EQ(rejections_.Snapshot().dropped_send_timeout, 0u);
  engine_.Complete(engine_.pending_ids()[0], Answer("x"));
  call.DropUnsent();
  call.DropUnsent();
  EXPECT_EQ(rejections_.Snapshot().dropped_send_timeout, 1u);
  EXPECT_EQ(call.send_deadline(), absl::InfiniteFuture());
}

TEST_F(ReadCallTest, DestructorGivesTheSlotBack) {
  {
    ReadCall call(core_);
    ASSERT_EQ(call.Start(Request(), absl::InfiniteFuture(), Record()),
              std::nullopt);
    engine_.Complete(engine_.pending_ids()[0], Answer("x"));
  }
  EXPECT_EQ(gate_.in_flight(), 0);
  EXPECT_EQ(memory_.held_bytes(), 0);
}

}  // namespace
}  // namespace tailgate::server
