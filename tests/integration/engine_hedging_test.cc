// The engine's hedging behaviour against real loopback replicas: when an
// extra attempt is made and where, which answer wins, what is returned when
// every attempt fails, and how the credit budget gates extra attempts.

#include <memory>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "tests/fake_clock.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

using Fault = ReplicaResponse::Fault;

// "At once" claims are checked against a hedge delay this long: a read that
// waited for the hedge timer instead would take at least that.
constexpr absl::Duration kLongHedgeDelay = absl::Seconds(2);
constexpr absl::Duration kAtOnce = absl::Milliseconds(500);

hedge::EngineConfig LongHedgeConfig() {
  hedge::EngineConfig config = EngineFixture::DefaultConfig();
  config.upstreams[0].hedge_delay = kLongHedgeDelay;
  config.timeout = absl::Seconds(5);
  return config;
}

const hygiene::HttpHeader* FindHeader(const hedge::EngineResponse& response,
                                      absl::string_view name) {
  for (const hygiene::HttpHeader& header : response.headers) {
    if (absl::EqualsIgnoreCase(header.name, name)) return &header;
  }
  return nullptr;
}

class EngineHedgingTest : public EngineFixture {
 protected:
  // The replica whose URL is not `url`, of two.
  Replica& Other(const std::string& url) {
    return replicas_[0]->url() == url ? *replicas_[1] : *replicas_[0];
  }
};

TEST_F(EngineHedgingTest, FastPrimaryAnswersWithoutHedge) {
  StartReplicas({Always(Answer("a")), Always(Answer("b"))});
  // Not the default 20 ms: a first read (connect included) can take that
  // long on a loaded machine under a sanitizer.
  StartEngine(LongHedgeConfig());
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->trace.attempts, 1);
  EXPECT_FALSE(response->trace.hedged);
  EXPECT_EQ(engine_->Snapshot().hedges, 0u);
  EXPECT_EQ(TotalRequests(), 1);
}

// A read arms a hedge and a deadline timer; finishing it cancels both, so
// no timer fires for a read that is gone (the loop's timerfd, left armed
// when the last timer goes, may still wake it once, for nothing).
TEST_F(EngineHedgingTest, FinishedReadsLeaveNoTimersBehind) {
  StartReplicas({Always(Answer("a")), Always(Answer("b"))});
  StartEngine(LongHedgeConfig());
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<hedge::EngineResponse> response = Read("/t");
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_FALSE(response->trace.hedged);
  }
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.timers_pending, 0u);
  EXPECT_EQ(stats.timers_fired, 0u);
}

// The timerfd stays armed for a finished read's cancelled hedge timer (it
// was the last timer); the next read's later hedge timer still fires at its
// own time, once.
TEST_F(EngineHedgingTest, AHedgeTimerBehindACancelledEarlierOneFiresOnTime) {
  constexpr absl::Duration kDelay = absl::Milliseconds(60);
  const Handler script = Route(
      {{"/fast", Always(Answer("fast"))},
       {"/slow",
        PerAttempt({Answer("late", absl::Seconds(2)), Answer("hedge")})}});
  StartReplicas({script, script});
  hedge::EngineConfig config = DefaultConfig();
  config.upstreams[0].hedge_delay = kDelay;
  config.timeout = absl::Seconds(5);
  StartEngine(config);
  absl::StatusOr<hedge::EngineResponse> fast = Read("/fast");
  ASSERT_TRUE(fast.ok()) << fast.status();
  ASSERT_FALSE(fast->trace.hedged);  // its hedge timer was cancelled

  absl::StatusOr<hedge::EngineResponse> slow = Read("/slow");
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ(slow->body, "hedge");
  EXPECT_TRUE(slow->trace.hedge_won);
  EXPECT_GE(slow->trace.latency, kDelay);  // not launched early
  EXPECT_LT(slow->trace.latency, absl::Seconds(2));
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.timers_fired, 1u);  // the second read's hedge timer only
  EXPECT_EQ(stats.timers_pending, 0u);
}

// The loop spins up to timer_spin for a timer that is nearly due, bounded in
// real time: a clock that never moves (this fake one) must not trap it.
TEST_F(EngineHedgingTest, TimerSpinEndsEvenIfTheClockStands) {
  FakeClock clock;
  StartReplicas({Always(Answer("a")), Always(Answer("b"))});
  hedge::EngineConfig config = DefaultConfig();
  config.timer_spin = absl::Microseconds(500);
  config.upstreams[0].hedge_delay = absl::Microseconds(100);  // inside it
  StartEngineWithUrls(config, ReplicaUrls(), clock);
  PendingRead& pending = NewPendingRead();
  Submit(Get("/s"), pending);
  const absl::StatusOr<hedge::EngineResponse>& response = pending.Wait();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_FALSE(response->trace.hedged);  // the fake clock never got there
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_GT(stats.timer_spin_total, absl::ZeroDuration());
  EXPECT_EQ(stats.timers_fired, 0u);
  engine_.reset();  // the engine, then its loop, before `clock` goes away
  loop_.reset();
}

TEST_F(EngineHedgingTest, SlowPrimaryIsHedgedAndLoserConnectionClosed) {
  StartReplicas(
      {Always(Answer("slow", absl::Seconds(3))), Always(Answer("fast"))});
  // Long enough that the read whose primary is the fast replica never
  // hedges, even on a loaded machine; far below the slow one's 3 s.
  constexpr absl::Duration kHedgeDelay = absl::Milliseconds(300);
  hedge::EngineConfig config = DefaultConfig();
  config.upstreams[0].hedge_delay = kHedgeDelay;
  StartEngine(config);
  // Primaries rotate: of two reads, exactly one starts on the slow replica.
  absl::StatusOr<hedge::EngineResponse> first = Read("/x");
  absl::StatusOr<hedge::EngineResponse> second = Read("/x");
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(first->trace.hedged, second->trace.hedged);
  const hedge::EngineResponse& response =
      first->trace.hedged ? *first : *second;
  EXPECT_EQ(response.body, "fast");
  EXPECT_TRUE(response.trace.hedge_won);
  EXPECT_EQ(response.trace.attempts, 2);
  EXPECT_EQ(response.trace.replica, replicas_[1]->url());
  EXPECT_GE(response.trace.latency, kHedgeDelay);
  EXPECT_TRUE(
      replicas_[0]->WaitForDisconnectsBeforeResponse(1, absl::Seconds(2)));
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.hedges, 1u);
  EXPECT_EQ(stats.hedge_wins, 1u);
  EXPECT_EQ(stats.in_flight_attempts, 0);
  // The hedge timer fired; the deadline timers were disarmed.
  EXPECT_EQ(stats.timers_fired, 1u);
  EXPECT_EQ(stats.timers_pending, 0u);
}

TEST_F(EngineHedgingTest, HedgeStartsAfterTheDelayOnAnotherReplica) {
  const Handler script =
      PerAttempt({Answer("slow", absl::Seconds(3)), Answer("fast")});
  StartReplicas({script, script});
  hedge::EngineConfig config = DefaultConfig();
  config.upstreams[0].hedge_delay = absl::Milliseconds(150);
  StartEngine(config);
  absl::StatusOr<hedge::EngineResponse> response = Read("/h");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "fast");
  EXPECT_TRUE(response->trace.hedge_won);
  EXPECT_GE(response->trace.latency, absl::Milliseconds(150));
  // One request on each replica: the hedge did not go to the primary's.
  EXPECT_EQ(replicas_[0]->requests_received(), 1);
  EXPECT_EQ(replicas_[1]->requests_received(), 1);
  // The slow primary lost and was cut off at once, long before its 3 s.
  EXPECT_TRUE(Other(response->trace.replica)
                  .WaitForDisconnectsBeforeResponse(1, absl::Seconds(1)));
  EXPECT_EQ(engine_->Snapshot().in_flight_attempts, 0);
}

TEST_F(EngineHedgingTest, ExtraAttemptAlwaysOnADistinctReplica) {
  const Handler script =
      PerAttempt({Answer("slow", absl::Seconds(3)), Answer("fast")});
  StartReplicas({script, script, script});
  StartEngine();
  for (int i = 0; i < 6; ++i) {
    const std::string target = absl::StrCat("/d?i=", i);
    absl::StatusOr<hedge::EngineResponse> response = Read(target);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->trace.attempts, 2);
    std::set<std::string> saw;
    for (const auto& replica : replicas_) {
      for (const ReplicaRequest& request : replica->requests()) {
        if (request.uri == target) saw.insert(replica->url());
      }
    }
    EXPECT_EQ(RequestsFor(target), 2);
    EXPECT_EQ(saw.size(), 2u) << target << " went twice to one replica";
    EXPECT_EQ(saw.count(response->trace.replica), 1u);
  }
}

TEST_F(EngineHedgingTest, LoneReplicaIsNeverHedgedOnItself) {
  StartReplicas({Always(Answer("slow", absl::Milliseconds(100)))});
  hedge::EngineConfig config = DefaultConfig();
  config.upstreams[0].hedge_delay = absl::Milliseconds(10);
  StartEngine(config);
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->trace.attempts, 1);
  EXPECT_EQ(replicas_[0]->requests_received(), 1);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.hedges, 0u);
  EXPECT_EQ(stats.skipped_no_replica, 1u);
}

TEST_F(EngineHedgingTest, DisabledHedgeStillFallsBackOnFailure) {
  const Handler script = Route(
      {{"/slow",
        PerAttempt({Answer("slow", absl::Milliseconds(200)), Answer("fast")})},
       {"/fail", PerAttempt({Answer("busy", absl::ZeroDuration(), 503),
                             Answer("ok")})}});
  StartReplicas({script, script});
  StartEngine();  // hedge delay 20 ms
  hedge::EngineRead slow = Get("/slow");
  slow.hedge_disabled = true;
  absl::StatusOr<hedge::EngineResponse> waited = Read(std::move(slow));
  ASSERT_TRUE(waited.ok()) << waited.status();
  EXPECT_EQ(waited->body, "slow");
  EXPECT_EQ(waited->trace.attempts, 1);
  EXPECT_EQ(RequestsFor("/slow"), 1);
  hedge::EngineRead fail = Get("/fail");
  fail.hedge_disabled = true;
  absl::StatusOr<hedge::EngineResponse> fell_back = Read(std::move(fail));
  ASSERT_TRUE(fell_back.ok()) << fell_back.status();
  EXPECT_EQ(fell_back->body, "ok");
  EXPECT_EQ(fell_back->trace.attempts, 2);
  EXPECT_EQ(engine_->Snapshot().fallbacks, 1u);
}

TEST_F(EngineHedgingTest, PerReadHedgeDelayOverridesTheUpstreams) {
  const Handler script =
      PerAttempt({Answer("slow", absl::Seconds(3)), Answer("fast")});
  StartReplicas({script, script});
  StartEngine(LongHedgeConfig());
  hedge::EngineRead read = Get("/x");
  read.hedge_delay = absl::Milliseconds(30);
  absl::StatusOr<hedge::EngineResponse> response = Read(std::move(read));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "fast");
  EXPECT_GE(response->trace.latency, absl::Milliseconds(30));
  EXPECT_LT(response->trace.latency, kAtOnce);
}

TEST_F(EngineHedgingTest, ServerErrorPrimaryFallsBackBeforeTimer) {
  StartReplicas(
      {Always(Answer("err", absl::ZeroDuration(), 503)), Always(Answer("ok"))});
  StartEngine(LongHedgeConfig());
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<hedge::EngineResponse> response = Read("/x");
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "ok");
    EXPECT_LT(response->trace.latency, kAtOnce);
  }
  EXPECT_EQ(engine_->Snapshot().fallbacks, 1u);
}

TEST_F(EngineHedgingTest, RefusedConnectionFallsBackBeforeTimer) {
  StartReplicas({Always(Answer("ok"))});
  StartEngineWithUrls(LongHedgeConfig(), {RefusedUrl(), replicas_[0]->url()});
  // Of two reads, one has the refusing replica as its primary.
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<hedge::EngineResponse> response = Read("/x");
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "ok");
    EXPECT_LT(last_latency_, kAtOnce);
  }
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.fallbacks, 1u);
  EXPECT_EQ(stats.backend_failures, 1u);
  EXPECT_EQ(stats.replicas[0].failures, 1u);
  EXPECT_EQ(stats.replicas[1].attempts_fallback, 1u);
}

TEST_F(EngineHedgingTest, TooLargePrimaryFallsBackBeforeTimer) {
  const Handler script =
      PerAttempt({Faulty(Fault::kHugeContentLength), Answer("ok")});
  StartReplicas({script, script});
  hedge::EngineConfig config = LongHedgeConfig();
  config.max_response_bytes = 1000;
  StartEngine(config);
  absl::StatusOr<hedge::EngineResponse> response = Read("/big");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "ok");
  EXPECT_TRUE(response->trace.hedge_won);
  EXPECT_LT(response->trace.latency, kAtOnce);
  EXPECT_TRUE(Other(response->trace.replica)
                  .WaitForDisconnectsBeforeResponse(1, absl::Seconds(1)));
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.fallbacks, 1u);
  EXPECT_EQ(stats.backend_failures, 1u);
}

TEST_F(EngineHedgingTest, ClientErrorWinsWithoutFallback) {
  StartReplicas({Always(Answer("missing", absl::ZeroDuration(), 404)),
                 Always(Answer("missing", absl::ZeroDuration(), 404))});
  StartEngine(LongHedgeConfig());
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 404);
  EXPECT_EQ(response->body, "missing");
  EXPECT_EQ(response->trace.attempts, 1);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.fallbacks, 0u);
  EXPECT_EQ(stats.backend_failures, 0u);
  EXPECT_EQ(TotalRequests(), 1);
}

TEST_F(EngineHedgingTest, FirstCompleteClientErrorBeatsSlowerSuccess) {
  // One script per replica, not PerAttempt: the answers must not depend on
  // which request arrives first. The first read's primary is replica 0.
  StartReplicas({Always(Answer("slow", absl::Seconds(3))),
                 Always(Answer("missing", absl::ZeroDuration(), 404))});
  StartEngine();
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 404);
  EXPECT_EQ(response->body, "missing");
  EXPECT_TRUE(response->trace.hedge_won);
  EXPECT_EQ(response->trace.replica, replicas_[1]->url());
  EXPECT_TRUE(
      replicas_[0]->WaitForDisconnectsBeforeResponse(1, absl::Seconds(1)));
}

TEST_F(EngineHedgingTest, ClientErrorAfterServerErrorWins) {
  const Handler script =
      PerAttempt({Answer("busy", absl::ZeroDuration(), 503),
                  Answer("missing", absl::ZeroDuration(), 404)});
  StartReplicas({script, script});
  StartEngine(LongHedgeConfig());
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 404);
  EXPECT_EQ(response->body, "missing");
  EXPECT_EQ(response->trace.attempts, 2);
}

TEST_F(EngineHedgingTest, RedirectIsReturnedNotFollowed) {
  absl::StatusOr<std::unique_ptr<Replica>> elsewhere =
      Replica::Start(Always(Answer("followed")));
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.status();
  const std::string location = (*elsewhere)->url() + "/moved";
  ReplicaResponse redirect = Answer("", absl::ZeroDuration(), 302);
  redirect.headers = {{"Location", location}};
  StartReplicas({Always(redirect), Always(redirect)});
  StartEngine(LongHedgeConfig());
  absl::StatusOr<hedge::EngineResponse> response = Read("/r");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 302);
  EXPECT_EQ(response->trace.attempts, 1);
  const hygiene::HttpHeader* returned = FindHeader(*response, "Location");
  ASSERT_NE(returned, nullptr);
  EXPECT_EQ(returned->value, location);
  // The redirecting replica got one request, and nobody fetched Location.
  EXPECT_EQ(TotalRequests(), 1);
  EXPECT_EQ(RequestsFor("/r"), 1);
  EXPECT_EQ((*elsewhere)->requests_received(), 0);
  EXPECT_EQ((*elsewhere)->connections_accepted(), 0);
}

TEST_F(EngineHedgingTest, BothServerErrorsForwardTheLastOne) {
  const Handler script =
      PerAttempt({Answer("first", absl::ZeroDuration(), 503),
                  Answer("second", absl::ZeroDuration(), 502)});
  StartReplicas({script, script});
  StartEngine(LongHedgeConfig());
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 502);
  EXPECT_EQ(response->body, "second");
  EXPECT_EQ(response->trace.attempts, 2);
  EXPECT_LT(response->trace.latency, kAtOnce);
  // The fallback answered, with a failure: hedging did not pay.
  EXPECT_TRUE(response->trace.hedged);
  EXPECT_FALSE(response->trace.hedge_won);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.backend_failures, 2u);
  EXPECT_EQ(stats.hedges, 1u);
  EXPECT_EQ(stats.hedge_wins, 0u);
}

TEST_F(EngineHedgingTest, ServerErrorIsForwardedOverATransportFailure) {
  const Handler script =
      Route({{"/a", PerAttempt({Answer("busy", absl::ZeroDuration(), 503),
                                Faulty(Fault::kResetAtOnce)})},
             {"/b", PerAttempt({Faulty(Fault::kResetAtOnce),
                                Answer("busy", absl::ZeroDuration(), 503)})}});
  StartReplicas({script, script});
  StartEngine(LongHedgeConfig());
  for (const char* target : {"/a", "/b"}) {
    absl::StatusOr<hedge::EngineResponse> response = Read(target);
    ASSERT_TRUE(response.ok()) << target << ": " << response.status();
    EXPECT_EQ(response->status, 503) << target;
    EXPECT_EQ(response->body, "busy") << target;
    EXPECT_EQ(response->trace.attempts, 2) << target;
  }
}

TEST_F(EngineHedgingTest, AllTransportFailuresAreUnavailable) {
  const std::string a = RefusedUrl();
  const std::string b = RefusedUrl();
  StartEngineWithUrls(LongHedgeConfig(), {a, b});
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable)
      << response.status();
  EXPECT_LT(last_latency_, kAtOnce);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.attempts, 2u);
  EXPECT_EQ(stats.backend_failures, 2u);
  ExpectIdle();
}

TEST_F(EngineHedgingTest, TooLargeAndTransportFailureIsResourceExhausted) {
  const Handler script =
      Route({{"/a", PerAttempt({Faulty(Fault::kHugeContentLength),
                                Faulty(Fault::kResetAtOnce)})},
             {"/b", PerAttempt({Faulty(Fault::kResetAtOnce),
                                Faulty(Fault::kHugeContentLength)})}});
  StartReplicas({script, script});
  hedge::EngineConfig config = LongHedgeConfig();
  config.max_response_bytes = 1000;
  StartEngine(config);
  for (const char* target : {"/a", "/b"}) {
    absl::StatusOr<hedge::EngineResponse> response = Read(target);
    EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted)
        << target << ": " << response.status();
    EXPECT_TRUE(
        absl::StrContains(response.status().message(), "max_response_bytes"))
        << response.status();
    EXPECT_LT(last_latency_, kAtOnce) << target;
    EXPECT_EQ(RequestsFor(target), 2) << target;
  }
  ExpectIdle();
}

TEST_F(EngineHedgingTest, ZeroRetryBudgetDisablesFailureFallback) {
  StartReplicas({Always(Answer("busy", absl::ZeroDuration(), 503)),
                 Always(Answer("busy", absl::ZeroDuration(), 503))});
  hedge::EngineConfig config = LongHedgeConfig();
  config.upstreams[0].retry = hedge::RetryBudgetConfig{0, 0, absl::Seconds(1)};
  StartEngine(config);
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(response->trace.attempts, 1);
  EXPECT_EQ(TotalRequests(), 1);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.hedges, 0u);
  EXPECT_EQ(stats.skipped_no_retry_budget, 1u);
  ASSERT_EQ(stats.upstreams.size(), 1u);
  EXPECT_DOUBLE_EQ(stats.upstreams[0].retry_credits, 0);
}

TEST_F(EngineHedgingTest, ZeroHedgeFractionKeepsFailureFallback) {
  StartReplicas({Always(Answer("busy", absl::ZeroDuration(), 503)),
                 Always(Answer("ok"))});
  hedge::EngineConfig config = LongHedgeConfig();
  config.upstreams[0].budget = hedge::HedgeBudgetConfig{0, 100};
  StartEngine(config);
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->trace.attempts, 2);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.fallbacks, 1u);
  ASSERT_EQ(stats.upstreams.size(), 1u);
  // The default retry budget: 10 per second over 10 s, plus 0.2 per read,
  // less the one fallback.
  EXPECT_DOUBLE_EQ(stats.upstreams[0].retry_credits, 100 + 0.2 - 1);
}

TEST_F(EngineHedgingTest, ZeroFractionDisablesTimerHedge) {
  StartReplicas({Always(Answer("slow", absl::Milliseconds(100))),
                 Always(Answer("slow", absl::Milliseconds(100)))});
  hedge::EngineConfig config = DefaultConfig();
  config.upstreams[0].hedge_delay = absl::Milliseconds(10);
  config.upstreams[0].budget = hedge::HedgeBudgetConfig{0, 100};
  StartEngine(config);
  absl::StatusOr<hedge::EngineResponse> response = Read("/x");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->trace.attempts, 1);
  EXPECT_FALSE(response->trace.hedged);
  EXPECT_EQ(TotalRequests(), 1);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.hedges, 0u);
  EXPECT_EQ(stats.skipped_no_budget, 1u);
}

}  // namespace
}  // namespace tailgate::testing
