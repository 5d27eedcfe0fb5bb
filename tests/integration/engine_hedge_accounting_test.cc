// The hedge accounting and the self-tuning policy against real loopback
// replicas: what a won hedge's loser cost, the adaptive delay taking over
// from its warm-up value, the payoff gate holding hedges back when every
// replica is slow together, the hedge delay counted from the primary's
// beginning, a batch's reads spending the credit they earned, and the
// give-up point (a fallback on the retry budget), which a read with
// hedging disabled does not have and no read reaches before its hedge
// delay.

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "hedge/adaptive/adaptive_hedge_delay.h"
#include "hedge/adaptive/hedge_payoff.h"
#include "hedge/health/give_up_point.h"
#include "hedge/policy/batch_credits.h"
#include "tests/fake_clock.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

using EngineHedgeAccountingTest = EngineFixture;

hedge::UpstreamSnapshot Upstream(const hedge::Engine& engine) {
  const hedge::EngineSnapshot snapshot = engine.Snapshot();
  EXPECT_EQ(snapshot.upstreams.size(), 1u);
  return snapshot.upstreams.at(0);
}

TEST_F(EngineHedgeAccountingTest, WonHedgeCountsItsLosersBytesAndRelease) {
  // The slow replica sends its status line and headers, then stalls: the
  // loser has received bytes by the time the hedge wins.
  StartReplicas(
      {Always(Faulty(ReplicaResponse::Fault::kStallAfterStatus, "never-sent")),
       Always(Answer("fast"))});
  hedge::EngineConfig config = DefaultConfig();
  config.upstreams[0].hedge_delay = absl::Milliseconds(300);
  StartEngine(config);
  // Primaries rotate: of two reads, exactly one starts on the slow replica.
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<hedge::EngineResponse> response = Read("/x");
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "fast");
  }
  const hedge::UpstreamSnapshot upstream = Upstream(*engine_);
  EXPECT_FALSE(upstream.hedge_delay_auto);
  EXPECT_EQ(upstream.hedge_delay, absl::Milliseconds(300));
  EXPECT_EQ(upstream.timer_hedges, 1u);
  EXPECT_EQ(upstream.timer_hedge_wins, 1u);
  EXPECT_EQ(upstream.hedge_win_ratio, 1.0);
  EXPECT_EQ(upstream.losers_released, 1u);
  EXPECT_GT(upstream.loser_bytes, 10u);  // at least "HTTP/1.1 200"
  EXPECT_GT(upstream.loser_release_total, absl::ZeroDuration());
  EXPECT_LT(upstream.loser_release_total, absl::Seconds(1));
  // Too few primaries seen to estimate what the win saved.
  EXPECT_EQ(upstream.latency_saved.count, 0u);
  ExpectIdle();
}

TEST_F(EngineHedgeAccountingTest, AdaptiveDelayLeavesItsWarmupValue) {
  StartReplicas({Always(Answer("a")), Always(Answer("b"))});
  hedge::EngineConfig config = DefaultConfig();
  hedge::AdaptiveDelayConfig& adaptive = config.upstreams[0].adaptive_delay;
  adaptive.enabled = true;
  adaptive.min = absl::Milliseconds(40);  // above any loopback answer
  adaptive.max = absl::Milliseconds(60);
  StartEngine(config);
  EXPECT_EQ(Upstream(*engine_).hedge_delay, absl::Milliseconds(40));
  EXPECT_TRUE(Upstream(*engine_).hedge_delay_auto);

  adaptive.min = absl::Milliseconds(1);
  adaptive.max = absl::Milliseconds(150);
  StartEngine(config);
  EXPECT_EQ(Upstream(*engine_).hedge_delay,
            hedge::AdaptiveHedgeDelay::kWarmupDelay);
  for (uint64_t i = 0; i < hedge::AdaptiveHedgeDelay::kMinSamples; ++i) {
    ASSERT_TRUE(Read("/x").ok());
  }
  // Loopback answers take well under a millisecond; the margin times their
  // median
  // is below the minimum, even on a loaded machine under a sanitizer.
  const absl::Duration learned = Upstream(*engine_).hedge_delay;
  EXPECT_LT(learned, hedge::AdaptiveHedgeDelay::kWarmupDelay);
  EXPECT_GE(learned, absl::Milliseconds(1));
}

TEST_F(EngineHedgeAccountingTest, HedgesThatCannotWinAreHeldBack) {
  // Every replica takes 40 ms: the hedge, 5 ms behind, loses every race.
  StartReplicas({Always(Answer("a", absl::Milliseconds(40))),
                 Always(Answer("b", absl::Milliseconds(40)))});
  hedge::EngineConfig config = DefaultConfig();
  config.upstreams[0].hedge_delay = absl::Milliseconds(5);
  StartEngine(config);
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(Read("/x").ok());
  const hedge::UpstreamSnapshot upstream = Upstream(*engine_);
  EXPECT_LT(upstream.hedge_win_ratio, hedge::HedgePayoff::kFullAt);
  EXPECT_LT(upstream.hedge_spend, 1.0);
  EXPECT_GT(upstream.hedges_held_back, 0u);
  EXPECT_EQ(upstream.timer_hedges + upstream.hedges_held_back, 60u);
  ExpectIdle();
}

// With a learned delay, a hedge timer that finds the credits below half
// the burst waits for twice the delay, and is counted.
TEST_F(EngineHedgeAccountingTest, LateHedgeWaitsAreCounted) {
  // Every read's first attempt hangs for 2 s, its second answers at once.
  const Handler slow_then_fast =
      PerAttempt({Answer("slow", absl::Seconds(2)), Answer("fast")});
  StartReplicas({slow_then_fast, slow_then_fast});
  hedge::EngineConfig config = DefaultConfig();
  // 4 credits banked, next to nothing earned: the reserve is 2.
  config.upstreams[0].budget = hedge::HedgeBudgetConfig{0.001, 4};
  hedge::AdaptiveDelayConfig& adaptive = config.upstreams[0].adaptive_delay;
  adaptive.enabled = true;
  adaptive.min = absl::Milliseconds(20);  // the delay, until learned
  adaptive.max = absl::Milliseconds(20);
  StartEngine(config);
  // Three hedges at 20 ms take the balance from 4 to about 1.
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<hedge::EngineResponse> response =
        Read(absl::StrCat("/r", i));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "fast");
  }
  EXPECT_EQ(Upstream(*engine_).late_hedge_waits, 0u);
  // The fourth read's timer finds it below 2: its hedge waits for 40 ms.
  absl::StatusOr<hedge::EngineResponse> late = Read("/r3");
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(late->body, "fast");
  EXPECT_TRUE(late->trace.hedged);
  EXPECT_GE(late->trace.latency, absl::Milliseconds(40));
  const hedge::UpstreamSnapshot upstream = Upstream(*engine_);
  EXPECT_EQ(upstream.late_hedge_waits, 1u);
  EXPECT_EQ(upstream.timer_hedges, 4u);
}

// A read whose primary the loop could not begin at once (the loop busy
// for 60 ms right after admitting it) waits the hedge delay from the
// primary's beginning: its primary, answering 20 ms after it began, is
// not hedged, though it answers 80 ms after admission, past the 50 ms
// delay.
TEST_F(EngineHedgeAccountingTest, HedgeDelayCountsFromThePrimarysBeginning) {
  StartReplicas({Always(Answer("a", absl::Milliseconds(20))),
                 Always(Answer("b", absl::Milliseconds(20)))});
  hedge::EngineConfig config = DefaultConfig();
  config.upstreams[0].hedge_delay = absl::Milliseconds(50);
  StartEngine(config);
  PendingRead& pending = NewPendingRead();
  ASSERT_TRUE(loop_
                  ->RunOnLoop([&](event_base*) {
                    Submit(Get("/busy"), pending);
                    const auto until = std::chrono::steady_clock::now() +
                                       std::chrono::milliseconds(60);
                    while (std::chrono::steady_clock::now() < until) {
                    }
                  })
                  .ok());
  const absl::StatusOr<hedge::EngineResponse>& response = pending.Wait();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_FALSE(response->trace.hedged);
  EXPECT_EQ(response->trace.attempts, 1);
  EXPECT_GE(response->trace.latency, absl::Milliseconds(80));
  const hedge::UpstreamSnapshot upstream = Upstream(*engine_);
  EXPECT_EQ(upstream.queued_hedge_waits, 1u);
  EXPECT_EQ(upstream.timer_hedges, 0u);
  ExpectIdle();
}

// Eight reads of one batch earn 8 x 0.25 = 2 credits of their own, beside
// the balance's burst of 1: three of them hedge. Eight reads alone hedge
// once (the balance holds 1 at most; what they earn beyond it is lost).
TEST_F(EngineHedgeAccountingTest, BatchReadsSpendTheCreditTheyEarned) {
  // Each target's first attempt takes 500 ms (within the 1 s timeout),
  // its second answers at once.
  const Handler slow_then_fast =
      PerAttempt({Answer("slow", absl::Milliseconds(500)), Answer("fast")});
  StartReplicas({slow_then_fast, slow_then_fast});
  hedge::EngineConfig config = DefaultConfig();
  config.upstreams[0].budget = hedge::HedgeBudgetConfig{0.25, 1};
  StartEngine(config);
  const auto hedged_of = [&](absl::string_view prefix, bool batch) {
    auto credits = batch ? std::make_shared<hedge::BatchCredits>() : nullptr;
    std::vector<PendingRead*> reads;
    for (int i = 0; i < 8; ++i) {
      hedge::EngineRead read = Get(absl::StrCat(prefix, i));
      read.batch = credits;
      reads.push_back(&NewPendingRead());
      Submit(std::move(read), *reads.back());
    }
    credits.reset();  // the reads hold it until they are done
    int hedged = 0;
    for (PendingRead* read : reads) {
      const absl::StatusOr<hedge::EngineResponse>& response = read->Wait();
      EXPECT_TRUE(response.ok()) << response.status();
      if (response.ok() && response->trace.hedged) ++hedged;
    }
    return hedged;
  };
  // The balance starts full: the batch's 2 credits, then the balance's 1.
  EXPECT_EQ(hedged_of("/batch", /*batch=*/true), 2 + 1);
  // Alone, the reads earn into the balance, which holds 1 at most.
  EXPECT_EQ(hedged_of("/alone", /*batch=*/false), 1);
  EXPECT_EQ(Upstream(*engine_).timer_hedges, 3u + 1u);
}

// The give-up point learned from fast answers (give_up_min, 20 ms), on a
// fake clock: a timer fires only once the test has moved the clock past
// it and woken the loop, so what is due when is exact. The first attempt
// of "/slow" answers "primary" 150 ms (real) after it arrives, any later
// one "extra" at once: a read that launched a second attempt ends with it.
class EngineGiveUpPointTest : public EngineFixture {
 protected:
  static constexpr absl::Duration kLearnedPoint = absl::Milliseconds(20);

  // Starts the engine with `config` and the default give-up settings, and
  // has it learn the point from fast answers.
  void StartLearned(hedge::EngineConfig config) {
    const Handler script =
        Route({{"/slow", PerAttempt({Answer("primary", absl::Milliseconds(150)),
                                     Answer("extra")})},
               {"/", Always(Answer("fast"))}});
    StartReplicas({script, script});
    config.upstreams[0].give_up = hedge::GiveUpConfig{};  // the defaults
    StartEngineWithUrls(config, ReplicaUrls(), clock_);
    for (int i = 0; i < hedge::GiveUpPoint::kMinSamples; ++i) {
      ASSERT_TRUE(Read("/fast").ok());
    }
    clock_.Advance(hedge::GiveUpPoint::kRefresh);
    const hedge::UpstreamSnapshot upstream = Upstream(*engine_);
    ASSERT_TRUE(upstream.give_up_learned);
    ASSERT_EQ(upstream.give_up_after, kLearnedPoint);
  }

  // Submits `read` of "/slow"; once its primary has reached a replica,
  // moves the clock by `elapsed` and wakes the loop, which fires what is
  // due by then. The read's result.
  absl::StatusOr<hedge::EngineResponse> ReadSlow(hedge::EngineRead read,
                                                 absl::Duration elapsed) {
    PendingRead& pending = NewPendingRead();
    Submit(std::move(read), pending);
    const absl::Time until = absl::Now() + absl::Seconds(10);
    while (RequestsFor("/slow") == 0) {
      if (absl::Now() >= until) {
        return absl::DeadlineExceededError("the primary never arrived");
      }
      absl::SleepFor(absl::Milliseconds(1));
    }
    clock_.Advance(elapsed);
    if (absl::Status woken = loop_->RunOnLoop([](event_base*) {});
        !woken.ok()) {
      return woken;
    }
    return pending.Wait();
  }

  // The read made one attempt, and nothing paid for a second.
  void ExpectOneAttempt(const absl::StatusOr<hedge::EngineResponse>& response) {
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "primary");
    EXPECT_EQ(response->trace.attempts, 1);
    EXPECT_FALSE(response->trace.hedged);
    EXPECT_EQ(RequestsFor("/slow"), 1);
    const hedge::UpstreamSnapshot upstream = Upstream(*engine_);
    EXPECT_EQ(upstream.give_up_fallbacks, 0u);
    EXPECT_EQ(upstream.timer_hedges, 0u);
    EXPECT_EQ(engine_->Snapshot().hedges, 0u);
    ExpectIdle();
  }

  FakeClock clock_;  // outlives the engine, which TearDown destroys
};

// The caller turned speculation off: the primary, answering at 150 ms,
// long past the give-up point, is the read's only attempt.
TEST_F(EngineGiveUpPointTest, HedgeDisabledReadIsNeverGivenUpOn) {
  ASSERT_NO_FATAL_FAILURE(StartLearned(DefaultConfig()));
  hedge::EngineRead read = Get("/slow");
  read.hedge_disabled = true;
  ExpectOneAttempt(ReadSlow(std::move(read), absl::Milliseconds(150)));
}

// The hedge delay (50 ms) is longer than the learned point: a primary
// answering at 30 ms gets no extra attempt at all.
TEST_F(EngineGiveUpPointTest, GiveUpPointWaitsForTheHedgeDelay) {
  hedge::EngineConfig config = DefaultConfig();
  config.upstreams[0].hedge_delay = absl::Milliseconds(50);
  ASSERT_NO_FATAL_FAILURE(StartLearned(config));
  ExpectOneAttempt(ReadSlow(Get("/slow"), absl::Milliseconds(30)));
}

}  // namespace
}  // namespace tailgate::testing
