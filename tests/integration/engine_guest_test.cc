// Guests on the loop thread lent to the engine (EventLoop::RunOnLoop), and
// the loan itself: a task runs on
// the loop thread with the loop's event_base, events made on that base run
// there too and may submit reads, and a read submitted from the loop
// thread itself (from a read's callback) starts without waiting for
// another wake-up.

#include <event2/event.h>
#include <pthread.h>

#include <array>
#include <future>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "hedge/hygiene/replica_url.h"
#include "hedge/transport/curl/curl_loop.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

class EngineGuestTest : public EngineFixture {};

hedge::EngineConfig ConfigFor(const std::vector<std::string>& urls) {
  hedge::EngineConfig config = EngineFixture::DefaultConfig();
  config.upstreams.resize(1);
  config.upstreams[0].replicas =
      *hygiene::ParseReplicaList(absl::StrJoin(urls, ","));
  return config;
}

std::string CurrentThreadName() {
  std::array<char, 16> name{};
  pthread_getname_np(pthread_self(), name.data(), name.size());
  return name.data();
}

TEST_F(EngineGuestTest, TaskRunsOnTheLoopThreadWithTheLoopsBase) {
  StartReplicas({Always(Answer("a"))});
  StartEngine();
  std::promise<std::pair<std::string, bool>> ran;
  ASSERT_TRUE(loop_
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
  ASSERT_TRUE(loop_
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

// The loop is lent, not given: it runs on after its engine is gone (a task
// still runs), and takes another engine, which reads as the first did.
TEST_F(EngineGuestTest, LoopOutlivesItsEngineAndServesTheNext) {
  StartReplicas({Always(Answer("again"))});
  StartEngine();
  ASSERT_TRUE(Read("/first").ok());
  engine_.reset();
  std::promise<std::string> ran;
  ASSERT_TRUE(loop_
                  ->RunOnLoop([&ran](event_base*) {
                    ran.set_value(CurrentThreadName());
                  })
                  .ok());
  std::future<std::string> thread = ran.get_future();
  ASSERT_EQ(thread.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  EXPECT_EQ(thread.get(), "engine_loop");

  hedge::transport::CurlLoop& loop = *loop_;
  absl::StatusOr<std::unique_ptr<hedge::Engine>> next =
      hedge::Engine::Create(ConfigFor(ReplicaUrls()), loop);
  ASSERT_TRUE(next.ok()) << next.status();
  engine_ = *std::move(next);
  const absl::StatusOr<hedge::EngineResponse> response = Read("/second");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "again");
}

// One loop serves one engine at a time: a second is refused while the
// first holds it.
TEST_F(EngineGuestTest, LoopServesOneEngineAtATime) {
  StartReplicas({Always(Answer("a"))});
  StartEngine();
  absl::StatusOr<std::unique_ptr<hedge::Engine>> second =
      hedge::Engine::Create(ConfigFor(ReplicaUrls()), *loop_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Read("/still").ok());
}

// A loop that is not running takes no task and no engine.
TEST(StoppedLoopTest, RefusesTasksAndEngines) {
  hedge::transport::CurlLoop loop(hedge::SteadyClock());
  bool ran = false;
  const absl::Status status =
      loop.RunOnLoop([&ran](event_base*) { ran = true; });
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(ran);
  hedge::EngineConfig config;
  config.upstreams.resize(1);
  config.upstreams[0].replicas =
      *hygiene::ParseReplicaList("http://127.0.0.1:1");
  const absl::StatusOr<std::unique_ptr<hedge::Engine>> engine =
      hedge::Engine::Create(config, loop);
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tailgate::testing
