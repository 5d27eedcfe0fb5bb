#include "server/read/read_batch.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
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

hedge::EngineResponse Answer(std::string body) {
  hedge::EngineResponse response;
  response.status = 200;
  response.body = std::move(body);
  return response;
}

v1::ReadManyRequest Batch(const std::vector<std::string>& paths,
                          uint32_t max_in_flight = 0) {
  v1::ReadManyRequest request;
  for (const std::string& path : paths) request.add_reads()->set_path(path);
  request.set_max_in_flight(max_in_flight);
  return request;
}

struct Item {
  size_t index;
  ReadOutcome outcome;
};

class ReadBatchTest : public ::testing::Test {
 protected:
  // A batch whose items are recorded, and sent at once unless `hold`.
  std::unique_ptr<ReadBatch> MakeBatch(
      v1::ReadManyRequest request,
      absl::Time deadline = absl::InfiniteFuture()) {
    return std::make_unique<ReadBatch>(
        core_, std::move(request), deadline,
        [this](size_t index, ReadOutcome outcome) {
          items_.push_back({index, std::move(outcome)});
          if (!hold_) batch_->Sent(index);
        },
        [this] { ++drained_; });
  }

  // Completes the engine's pending reads whose target is `path`.
  void Complete(const std::string& path, std::string body) {
    const std::vector<hedge::EngineRead> submitted = engine_.submitted();
    for (uint64_t id : engine_.pending_ids()) {
      if (submitted[id - 1].target == path) {
        ASSERT_TRUE(engine_.Complete(id, Answer(body)));
        return;
      }
    }
    FAIL() << "no pending read of " << path;
  }

  testing::FakeEngine engine_;
  DrainGate gate_;
  Rejections rejections_;
  ResponseMemory memory_{/*max_calls=*/4, /*max_bytes=*/1 << 20};
  ReadCore core_{
      engine_,
      gate_,
      rejections_,
      memory_,
      {.timeout = absl::Seconds(1), .send_timeout = absl::Seconds(5)}};
  std::unique_ptr<ReadBatch> batch_;
  std::vector<Item> items_;
  bool hold_ = false;
  int drained_ = 0;
};

TEST_F(ReadBatchTest, ItemsComeInCompletionOrderEachIndexOnceWithItsBody) {
  batch_ = MakeBatch(Batch({"/a", "/b", "/c"}));
  batch_->Start();
  ASSERT_EQ(engine_.pending_ids().size(), 3u);
  Complete("/c", "C");
  Complete("/a", "A");
  Complete("/b", "B");
  ASSERT_EQ(items_.size(), 3u);
  const std::vector<size_t> order = {items_[0].index, items_[1].index,
                                     items_[2].index};
  EXPECT_EQ(order, (std::vector<size_t>{2, 0, 1}));
  for (const Item& item : items_) {
    ASSERT_TRUE(item.outcome.answer.has_value());
    EXPECT_EQ(item.outcome.answer->body, std::string(1, "ABC"[item.index]));
  }
  EXPECT_TRUE(batch_->done());
  EXPECT_EQ(memory_.calls(), 0);
  EXPECT_EQ(memory_.held_bytes(), 0);
  EXPECT_EQ(gate_.in_flight(), 0);
}

// A wrong descriptor and an unknown upstream fail their own items (codes
// 3 and 5); the others are read.
TEST_F(ReadBatchTest, ABadReadFailsOnlyItsItem) {
  v1::ReadManyRequest request = Batch({"/ok", "no-slash", "/ok2"});
  batch_ = MakeBatch(std::move(request));
  batch_->Start();
  ASSERT_EQ(items_.size(), 1u);
  EXPECT_EQ(items_[0].index, 1u);
  EXPECT_EQ(items_[0].outcome.error.status.code(),
            absl::StatusCode::kInvalidArgument);
  Complete("/ok", "1");
  Complete("/ok2", "2");
  EXPECT_EQ(items_.size(), 3u);
  EXPECT_TRUE(batch_->done());

  items_.clear();
  engine_.RefuseWith(ReadFailureStatus(ReadFailure::kUnknownUpstream,
                                       "no upstream named nope"));
  batch_ = MakeBatch(Batch({"/x"}));
  batch_->Start();
  ASSERT_EQ(items_.size(), 1u);
  EXPECT_EQ(items_[0].outcome.error.status.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(batch_->done());
}

TEST_F(ReadBatchTest, MaxInFlightBoundsTheReadsHoldingASlot) {
  batch_ = MakeBatch(Batch({"/1", "/2", "/3", "/4", "/5"}, 2));
  batch_->Start();
  EXPECT_EQ(engine_.submitted().size(), 2u);
  Complete("/1", "1");
  EXPECT_EQ(engine_.submitted().size(), 3u);
  EXPECT_EQ(engine_.pending_ids().size(), 2u);
}

// An answer not yet sent keeps its slot: the window counts it.
TEST_F(ReadBatchTest, AnItemNotYetSentKeepsItsSlot) {
  hold_ = true;
  batch_ = MakeBatch(Batch({"/1", "/2", "/3"}, 1));
  batch_->Start();
  Complete("/1", "1");
  EXPECT_EQ(engine_.submitted().size(), 1u);
  EXPECT_GT(memory_.held_bytes(), 0);
  batch_->Sent(0);
  EXPECT_EQ(engine_.submitted().size(), 2u);
  EXPECT_EQ(memory_.held_bytes(), 0);
}

// With admission full of its own reads, a batch waits for them instead of
// failing its items: 6 reads through 4 slots all succeed.
TEST_F(ReadBatchTest, AdmissionFullOfItsOwnReadsWaitsForThem) {
  batch_ = MakeBatch(Batch({"/1", "/2", "/3", "/4", "/5", "/6"}));
  batch_->Start();
  EXPECT_EQ(engine_.submitted().size(), 4u);
  EXPECT_TRUE(items_.empty());
  for (const char* path : {"/1", "/2", "/3", "/4", "/5", "/6"}) {
    Complete(path, path);
  }
  ASSERT_EQ(items_.size(), 6u);
  for (const Item& item : items_) {
    EXPECT_TRUE(item.outcome.answer.has_value()) << item.index;
  }
  EXPECT_TRUE(batch_->done());
}

// With every slot held by other calls before it has handed over anything,
// the batch is refused whole: no item, one refusal.
TEST_F(ReadBatchTest, WithNoSlotOfItsOwnAnAdmissionRefusalRefusesTheBatch) {
  std::vector<std::unique_ptr<ReadCall>> others;
  for (int i = 0; i < 4; ++i) {
    others.push_back(std::make_unique<ReadCall>(core_));
    v1::ReadRequest request;
    request.set_path("/other");
    ASSERT_EQ(others.back()->Start(request, absl::InfiniteFuture(),
                                   [](ReadOutcome) {}),
              std::nullopt);
  }
  batch_ = MakeBatch(Batch({"/1", "/2"}));
  const std::optional<ReadError> refused = batch_->Start();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(items_.empty());
  EXPECT_EQ(rejections_.Snapshot().too_many_calls, 1u);  // counted once
  EXPECT_EQ(engine_.pending_ids().size(), 4u);           // the others' alone
  for (uint64_t id : engine_.pending_ids()) {
    engine_.Complete(id, Answer("x"));
  }
}

// A read that finds one of the batch's shares full waits for a place,
// never failing for it; Resume starts it once one came back.
TEST_F(ReadBatchTest, AReadWaitsForAPlaceInEveryShare) {
  auto connection = std::make_shared<ReadShare>(0);
  auto door = std::make_shared<ReadShare>(1);
  int rooms = 0;
  door->set_room([&rooms] { ++rooms; });
  ASSERT_TRUE(door->TryTake());  // another batch's read
  batch_ = std::make_unique<ReadBatch>(
      core_, Batch({"/1"}), absl::InfiniteFuture(),
      [this](size_t index, ReadOutcome outcome) {
        items_.push_back({index, std::move(outcome)});
      },
      [] {}, std::vector<std::shared_ptr<ReadShare>>{connection, door});
  EXPECT_EQ(batch_->Start(), std::nullopt);
  EXPECT_TRUE(engine_.pending_ids().empty());
  EXPECT_EQ(connection->held(), 0) << "a place in both or in neither";
  door->Give();
  EXPECT_EQ(rooms, 1);
  batch_->Resume();
  ASSERT_EQ(engine_.pending_ids().size(), 1u);
  EXPECT_EQ(connection->held(), 1);
  EXPECT_EQ(door->held(), 1);
  Complete("/1", "1");
  ASSERT_EQ(items_.size(), 1u);
  batch_->Sent(items_[0].index);
  EXPECT_EQ(connection->held(), 0);
  EXPECT_EQ(door->held(), 0);
}

// The client gone: the reads in flight are cancelled, none starts, no item
// is handed over, and `drained` runs once, with every slot back.
TEST_F(ReadBatchTest, ClientGoneCancelsTheReadsInFlightAndDrains) {
  batch_ = MakeBatch(Batch({"/1", "/2", "/3", "/4", "/5", "/6"}));
  batch_->Start();
  Complete("/1", "1");
  ASSERT_EQ(items_.size(), 1u);
  batch_->ClientGone();
  EXPECT_EQ(engine_.cancelled().size(), 4u);
  EXPECT_EQ(engine_.submitted().size(), 5u);
  EXPECT_EQ(items_.size(), 1u);
  EXPECT_EQ(drained_, 1);
  EXPECT_EQ(batch_->running(), 0u);
  EXPECT_EQ(memory_.calls(), 0);
  EXPECT_EQ(gate_.in_flight(), 0);
  batch_->ClientGone();
  EXPECT_EQ(drained_, 1);
}

TEST_F(ReadBatchTest,
       ReadsNotStartedByTheDeadlineFailWithoutReachingTheEngine) {
  batch_ = MakeBatch(Batch({"/1", "/2"}), absl::Now() - absl::Seconds(1));
  batch_->Start();
  ASSERT_EQ(items_.size(), 2u);
  for (const Item& item : items_) {
    EXPECT_EQ(item.outcome.error.status.code(),
              absl::StatusCode::kDeadlineExceeded);
  }
  EXPECT_TRUE(engine_.submitted().empty());
  EXPECT_TRUE(batch_->done());
}

}  // namespace
}  // namespace tailgate::server
