#include "server/testing/fake_loop_engine.h"

#include <event2/event.h>

#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "hedge/sync/mutex.h"

namespace tailgate::server::testing {
namespace {

constexpr absl::Duration kWait = absl::Seconds(10);

// What a read's callback saw: its result and the thread it ran on.
struct Completion {
  void Set(absl::StatusOr<hedge::EngineResponse> got) {
    hedge::MutexLock lock(&mu);
    result = std::move(got);
    thread = std::this_thread::get_id();
    changed.SignalAll();
  }
  // The result, once the callback has run.
  std::optional<absl::StatusOr<hedge::EngineResponse>> Wait() {
    const absl::Time deadline = absl::Now() + kWait;
    hedge::MutexLock lock(&mu);
    while (!result.has_value()) {
      if (changed.WaitWithDeadline(&mu, deadline)) break;
    }
    return result;
  }
  std::thread::id Thread() {
    hedge::MutexLock lock(&mu);
    return thread;
  }

  hedge::Mutex mu;
  hedge::CondVar changed;
  std::optional<absl::StatusOr<hedge::EngineResponse>> result
      ABSL_GUARDED_BY(mu);
  std::thread::id thread ABSL_GUARDED_BY(mu);
};

std::unique_ptr<FakeLoopEngine> NewEngine() {
  absl::StatusOr<std::unique_ptr<FakeLoopEngine>> engine =
      FakeLoopEngine::Create();
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? *std::move(engine) : nullptr;
}

// Runs `step` on the loop and waits for it; returns the loop's thread id.
std::thread::id OnLoop(FakeLoopEngine& engine,
                       absl::AnyInvocable<void(event_base*)> step) {
  Completion ran;
  EXPECT_TRUE(engine
                  .RunOnLoop([&](event_base* base) {
                    step(base);
                    ran.Set(hedge::EngineResponse{});
                  })
                  .ok());
  EXPECT_TRUE(ran.Wait().has_value());
  return ran.Thread();
}

TEST(FakeLoopEngineTest, RunsTasksOnItsLoopWithTheBase) {
  std::unique_ptr<FakeLoopEngine> engine = NewEngine();
  ASSERT_NE(engine, nullptr);
  event_base* seen = nullptr;
  const std::thread::id loop =
      OnLoop(*engine, [&](event_base* base) { seen = base; });
  EXPECT_NE(seen, nullptr);
  EXPECT_NE(loop, std::this_thread::get_id());
}

TEST(FakeLoopEngineTest, AnswersAReadOnTheLoopThreadNeverInsideSubmit) {
  std::unique_ptr<FakeLoopEngine> engine = NewEngine();
  ASSERT_NE(engine, nullptr);
  Completion completion;
  bool completed_inside_submit = true;
  const std::thread::id loop = OnLoop(*engine, [&](event_base*) {
    hedge::EngineRead read;
    read.target = "/item";
    read.deadline = absl::UnixEpoch() + absl::Seconds(7);
    absl::StatusOr<uint64_t> id = engine->Submit(
        std::move(read), [&](absl::StatusOr<hedge::EngineResponse> result) {
          completion.Set(std::move(result));
        });
    EXPECT_TRUE(id.ok());
    completed_inside_submit = engine->pending() == 0;
  });
  EXPECT_FALSE(completed_inside_submit);

  std::optional<FakeLoopEngine::Submitted> read = engine->WaitForRead(0, kWait);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->read.target, "/item");
  EXPECT_EQ(read->read.deadline, absl::UnixEpoch() + absl::Seconds(7));
  EXPECT_TRUE(read->on_loop_thread);
  hedge::EngineResponse response;
  response.status = 203;
  response.body = "body";
  ASSERT_TRUE(engine->Answer(read->id, response));
  EXPECT_FALSE(engine->Answer(read->id, response));  // no longer pending

  std::optional<absl::StatusOr<hedge::EngineResponse>> result =
      completion.Wait();
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(result->ok());
  EXPECT_EQ((*result)->status, 203);
  EXPECT_EQ((*result)->body, "body");
  EXPECT_EQ(completion.Thread(), loop);
}

TEST(FakeLoopEngineTest, FailsWithATypedFailure) {
  std::unique_ptr<FakeLoopEngine> engine = NewEngine();
  ASSERT_NE(engine, nullptr);
  Completion completion;
  absl::StatusOr<uint64_t> id = engine->Submit(
      {}, [&](absl::StatusOr<hedge::EngineResponse> result) {
        completion.Set(std::move(result));
      });
  ASSERT_TRUE(id.ok());
  EXPECT_FALSE(engine->submitted()[0].on_loop_thread);
  ASSERT_TRUE(engine->Fail(*id, hedge::ReadFailure::kTooLarge, "too big"));
  std::optional<absl::StatusOr<hedge::EngineResponse>> result =
      completion.Wait();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(hedge::ReadFailureOf(result->status()),
            hedge::ReadFailure::kTooLarge);
}

TEST(FakeLoopEngineTest, CancelCompletesWithCancelledAndIsRecorded) {
  std::unique_ptr<FakeLoopEngine> engine = NewEngine();
  ASSERT_NE(engine, nullptr);
  Completion completion;
  absl::StatusOr<uint64_t> id = engine->Submit(
      {}, [&](absl::StatusOr<hedge::EngineResponse> result) {
        completion.Set(std::move(result));
      });
  ASSERT_TRUE(id.ok());
  EXPECT_FALSE(engine->WaitForCancelled(*id, absl::Milliseconds(1)));
  std::thread canceller([&] { engine->Cancel(*id); });
  EXPECT_TRUE(engine->WaitForCancelled(*id, kWait));
  canceller.join();
  std::optional<absl::StatusOr<hedge::EngineResponse>> result =
      completion.Wait();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(hedge::ReadFailureOf(result->status()),
            hedge::ReadFailure::kCancelled);
  EXPECT_EQ(engine->pending(), 0u);
}

TEST(FakeLoopEngineTest, RefusesAsScripted) {
  std::unique_ptr<FakeLoopEngine> engine = NewEngine();
  ASSERT_NE(engine, nullptr);
  engine->RefuseWith(hedge::ReadFailureStatus(hedge::ReadFailure::kOverloaded,
                                              "max_requests"));
  absl::StatusOr<uint64_t> id =
      engine->Submit({}, [](absl::StatusOr<hedge::EngineResponse>) {
        ADD_FAILURE() << "a refused read completed";
      });
  EXPECT_EQ(hedge::ReadFailureOf(id.status()), hedge::ReadFailure::kOverloaded);
  ASSERT_EQ(engine->submitted().size(), 1u);
  EXPECT_EQ(engine->submitted()[0].id, 0u);
  EXPECT_EQ(engine->pending(), 0u);
}

TEST(FakeLoopEngineTest, DestructionCompletesPendingReadsAsShuttingDown) {
  std::unique_ptr<FakeLoopEngine> engine = NewEngine();
  ASSERT_NE(engine, nullptr);
  Completion completion;
  ASSERT_TRUE(engine
                  ->Submit({},
                           [&](absl::StatusOr<hedge::EngineResponse> result) {
                             completion.Set(std::move(result));
                           })
                  .ok());
  engine.reset();
  std::optional<absl::StatusOr<hedge::EngineResponse>> result =
      completion.Wait();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(hedge::ReadFailureOf(result->status()),
            hedge::ReadFailure::kShuttingDown);
}

}  // namespace
}  // namespace tailgate::server::testing
