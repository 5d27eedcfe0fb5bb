// Guests on the engine's loop thread (Engine::RunOnLoop): a task runs on
// the loop thread with the loop's event_base, events made on that base run
// there too and may submit reads, and a read submitted from the loop
// thread itself (from a read's callback) starts without waiting for
// another wake-up.

#include <event2/event.h>
#include <pthread.h>

#include <array>
#include <future>
#include <string>

#include "gtest/gtest.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

class EngineGuestTest : public EngineFixture {};

std::string CurrentThreadName() {
  std::array<char, 16> name{};
  pthread_getname_np(pthread_self(), name.data(), name.size());
  return name.data();
}

TEST_F(EngineGuestTest, TaskRunsOnTheLoopThreadWithTheLoopsBase) {
  StartReplicas({Always(Answer("a"))});
  StartEngine();
  std::promise<std::pair<std::string, bool>> ran;
  ASSERT_TRUE(engine_
                  ->RunOnLoop([&ran](event_base* base) {
                    ran.set_value({CurrentThreadName(), base != nullptr});
                  })
                  .ok());
  std::future<std::pair<std::string, bool>> result = ran.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  const auto [thread, has_base] = result.get();
  EXPECT_EQ(thread, "engine_loop");
  EXPECT_TRUE(has_base);
}

// An event of the guest's, on the loop's base, submits a read: it starts
// and completes on the loop thread.
TEST_F(EngineGuestTest, GuestEventSubmitsAReadThatCompletesOnTheLoop) {
  StartReplicas({Always(Answer("from the guest"))});
  StartEngine();
  struct Guest {
    hedge::Engine* engine;
    hedge::EngineRead read;
    std::promise<std::pair<std::string, std::string>> done;
    event* timer = nullptr;
  } guest{engine_.get(), Get("/guest")};
  auto on_timer = [](evutil_socket_t, short, void* arg) {
    auto* g = static_cast<Guest*>(arg);
    event_free(g->timer);  // a one-shot event, freed on the loop thread
    absl::StatusOr<uint64_t> id = g->engine->Submit(
        g->read, [g](absl::StatusOr<hedge::EngineResponse> response) {
          g->done.set_value(
              {CurrentThreadName(),
               response.ok() ? response->body : response.status().ToString()});
        });
    if (!id.ok()) g->done.set_value({"refused", id.status().ToString()});
  };
  ASSERT_TRUE(engine_
                  ->RunOnLoop([&guest, on_timer](event_base* base) {
                    guest.timer = evtimer_new(base, on_timer, &guest);
                    const timeval now{0, 0};
                    evtimer_add(guest.timer, &now);
                  })
                  .ok());
  std::future<std::pair<std::string, std::string>> result =
      guest.done.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  const auto [thread, body] = result.get();
  EXPECT_EQ(thread, "engine_loop");
  EXPECT_EQ(body, "from the guest");
}

// A read submitted from another read's callback (on the loop thread, while
// the loop is awake) starts at once: the loop looks at its inbox again
// before it sleeps, with nothing else to wake it (no timer, no other read:
// it would otherwise sleep for its idle wait, 60 s).
TEST_F(EngineGuestTest, ReadSubmittedFromACallbackStartsAtOnce) {
  StartReplicas({Always(Answer("next"))});
  StartEngine();
  PendingRead& second = NewPendingRead();
  PendingRead& first = NewPendingRead();
  hedge::Engine* engine = engine_.get();
  hedge::EngineRead next = Get("/second");
  hedge::ReadCallback first_done = first.Callback();
  ASSERT_TRUE(
      engine_
          ->Submit(
              Get("/first"),
              [&,
               engine](absl::StatusOr<hedge::EngineResponse> response) mutable {
                EXPECT_TRUE(
                    engine->Submit(std::move(next), second.Callback()).ok());
                first_done(std::move(response));
              })
          .ok());
  ASSERT_TRUE(first.Wait().ok());
  const absl::StatusOr<hedge::EngineResponse>& response =
      second.Wait(absl::Seconds(5));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "next");
}

// An engine without a loop (a test double) refuses, and never runs, a task.
TEST(EngineWithoutLoopTest, RefusesTasks) {
  class NoLoop : public hedge::Engine {
   public:
    absl::StatusOr<uint64_t> Submit(hedge::EngineRead,
                                    hedge::ReadCallback) override {
      return absl::UnimplementedError("");
    }
    void Cancel(uint64_t) override {}
    absl::Status SetUpstreams(std::vector<hedge::UpstreamConfig>) override {
      return absl::OkStatus();
    }
    hedge::EngineSnapshot Snapshot() const override { return {}; }
    hedge::Clock& clock() const override { return hedge::SteadyClock(); }
  } no_loop;
  bool ran = false;
  const absl::Status status =
      no_loop.RunOnLoop([&ran](event_base*) { ran = true; });
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace tailgate::testing
