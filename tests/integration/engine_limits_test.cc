// The engine's global limits through real I/O: non-blocking request and
// attempt semaphores, the aggregate hedge budget under concurrency, and
// permits released exactly once whatever way a read ends.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

using Fault = ReplicaResponse::Fault;

struct Submitted {
  uint64_t id = 0;
  PendingRead* pending = nullptr;  // owned by the fixture
};

class EngineLimitsTest : public EngineFixture {
 protected:
  // Submits `n` reads of distinct targets under `prefix`, all at once.
  std::vector<Submitted> SubmitMany(int n, const std::string& prefix) {
    std::vector<Submitted> reads(n);
    for (int i = 0; i < n; ++i) {
      reads[i].pending = &NewPendingRead();
      reads[i].id =
          Submit(Get(absl::StrCat(prefix, "?i=", i)), *reads[i].pending);
    }
    return reads;
  }

  // Waits for every read (each answered with `status`) and checks the
  // hedge budget's bound: extra attempts <= burst + fraction * admitted,
  // and that at least `spent` credits were spent before it ran out.
  void ExpectBudgetBound(std::vector<Submitted>& reads, int status,
                         double fraction, double burst, double spent) {
    for (Submitted& read : reads) {
      const absl::StatusOr<hedge::EngineResponse>& result =
          read.pending->Wait();
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(result->status, status);
    }
    const hedge::EngineSnapshot stats = engine_->Snapshot();
    EXPECT_EQ(stats.requests, reads.size());
    EXPECT_LE(static_cast<double>(stats.hedges),
              burst + fraction * static_cast<double>(stats.requests));
    // The budget was really spent, and really ran out.
    EXPECT_GE(static_cast<double>(stats.hedges), spent);
    EXPECT_GT(stats.skipped_no_budget, 0u);
    EXPECT_EQ(stats.attempts, stats.requests + stats.hedges);
    EXPECT_LE(TotalRequests(), static_cast<int64_t>(stats.attempts));
    ExpectIdle();
  }
};

// A chunked body without end, 100 bytes a millisecond.
ReplicaResponse Streaming() {
  ReplicaResponse response = Faulty(Fault::kEndlessChunked, "0123456789");
  response.drip_bytes = 100;
  return response;
}

hedge::EngineConfig BudgetConfig(double fraction, double burst) {
  hedge::EngineConfig config = EngineFixture::DefaultConfig();
  config.upstreams[0].budget = hedge::HedgeBudgetConfig{fraction, burst};
  // Circuits stay closed (neither consecutive failures nor a failure rate
  // eject a replica), so every read keeps wanting its extra attempt: with
  // a replica ejected, a read on the other has no fallback to want, and
  // how many reads that is depends on how fast their outcomes come in.
  config.upstreams[0].circuit.failure_threshold = 1'000'000;
  config.upstreams[0].circuit.min_requests = 1'000'000;
  config.admission = hedge::AdmissionConfig{256, 512};
  config.timeout = absl::Seconds(10);
  return config;
}

TEST_F(EngineLimitsTest, MaxRequestsRefusesAtOnceWithoutQueueing) {
  StartReplicas({Always(Hang()), Always(Hang())});
  hedge::EngineConfig config = DefaultConfig();
  config.admission.max_requests = 4;
  config.timeout = absl::Seconds(10);
  StartEngine(config);
  std::vector<Submitted> held = SubmitMany(4, "/held");

  PendingRead& refused = NewPendingRead();
  const absl::Time start = hedge::SteadyClock().Now();
  absl::StatusOr<uint64_t> id =
      engine_->Submit(Get("/refused"), refused.Callback());
  const absl::Duration submit_took = hedge::SteadyClock().Now() - start;
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(id.status().message(), "max_requests"))
      << id.status();
  EXPECT_LT(submit_took, absl::Milliseconds(100));
  EXPECT_EQ(engine_->Snapshot().rejected_overloaded, 1u);
  EXPECT_EQ(engine_->Snapshot().requests, 4u);

  // Freeing the slots admits new reads; the refused one never ran.
  for (Submitted& read : held) engine_->Cancel(read.id);
  for (Submitted& read : held) {
    EXPECT_EQ(read.pending->Wait().status().code(),
              absl::StatusCode::kCancelled);
  }
  ExpectIdle();
  for (const auto& replica : replicas_) {
    replica->SetHandler(Always(Answer("ok")));
  }
  absl::StatusOr<hedge::EngineResponse> admitted = Read("/after");
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  EXPECT_EQ(RequestsFor("/refused"), 0);
  EXPECT_FALSE(refused.done());
}

TEST_F(EngineLimitsTest, MaxAttemptsBoundsConcurrentUpstreamRequests) {
  constexpr int kMaxAttempts = 8;
  constexpr int kReads = 50;
  StartReplicas({Always(Hang()), Always(Hang())});
  hedge::EngineConfig config = DefaultConfig();
  config.admission = hedge::AdmissionConfig{128, kMaxAttempts};
  config.timeout = absl::Milliseconds(500);
  config.upstreams[0].hedge_delay = absl::Milliseconds(50);
  StartEngine(config);
  std::vector<Submitted> reads = SubmitMany(kReads, "/r");

  // Sample both sides while the reads are in flight.
  int64_t most_attempts = 0;
  int64_t most_connections = 0;
  while (!std::all_of(reads.begin(), reads.end(), [](const Submitted& read) {
    return read.pending->done();
  })) {
    most_attempts =
        std::max(most_attempts, engine_->Snapshot().in_flight_attempts);
    int64_t connections = 0;
    for (const auto& replica : replicas_) {
      connections += replica->open_connections();
    }
    most_connections = std::max(most_connections, connections);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  int exhausted = 0;
  int timed_out = 0;
  for (Submitted& read : reads) {
    const absl::Status& status = read.pending->Wait().status();
    if (status.code() == absl::StatusCode::kResourceExhausted) {
      EXPECT_TRUE(absl::StrContains(status.message(), "max_attempts"))
          << status;
      ++exhausted;
    } else {
      EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
      ++timed_out;
    }
  }
  EXPECT_GE(exhausted, kReads - kMaxAttempts);
  EXPECT_GE(timed_out, 1);
  EXPECT_LE(most_attempts, kMaxAttempts);
  EXPECT_LE(most_connections, kMaxAttempts);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.attempts, static_cast<uint64_t>(kMaxAttempts));
  EXPECT_EQ(TotalRequests(), kMaxAttempts);
  // The hedges wanted by the held reads found no attempt permit.
  EXPECT_GT(stats.skipped_no_capacity, 0u);
  ExpectIdle();
}

TEST_F(EngineLimitsTest, RetryBudgetBoundsFallbacksWhenAllFail) {
  // 0.1 of a retry credit per read plus 0.5 per second over 10 s: at most
  // 5 + 0.1 * 200 = 25 fallbacks for 200 reads in one window; the hedge
  // credits are not touched.
  constexpr double kFraction = 0.1;
  constexpr double kReserve = 5;
  StartReplicas({Always(Answer("busy", absl::ZeroDuration(), 503)),
                 Always(Answer("busy", absl::ZeroDuration(), 503))});
  hedge::EngineConfig config = BudgetConfig(0.1, 3);
  config.upstreams[0].hedge_delay = absl::Seconds(5);  // fallbacks only
  config.upstreams[0].retry = {kFraction, 0.5, absl::Seconds(10)};
  StartEngine(config);
  std::vector<Submitted> reads = SubmitMany(200, "/fail");
  for (Submitted& read : reads) {
    const absl::StatusOr<hedge::EngineResponse>& result = read.pending->Wait();
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->status, 503);
  }
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.fallbacks, stats.hedges);
  EXPECT_LE(static_cast<double>(stats.fallbacks), kReserve + kFraction * 200);
  EXPECT_GE(static_cast<double>(stats.fallbacks), kReserve);
  EXPECT_GT(stats.skipped_no_retry_budget, 0u);
  EXPECT_EQ(stats.skipped_no_budget, 0u);
  ASSERT_EQ(stats.upstreams.size(), 1u);
  EXPECT_DOUBLE_EQ(stats.upstreams[0].hedge_credits, 3);  // untouched
  EXPECT_LT(stats.upstreams[0].retry_credits, 1);
  ExpectIdle();
}

TEST_F(EngineLimitsTest, HedgeBudgetBoundsExtraAttemptsWhenAllSlow) {
  constexpr double kFraction = 0.1;
  constexpr double kBurst = 3;
  StartReplicas({Always(Answer("slow", absl::Milliseconds(100))),
                 Always(Answer("slow", absl::Milliseconds(100)))});
  hedge::EngineConfig config = BudgetConfig(kFraction, kBurst);
  config.upstreams[0].hedge_delay = absl::Milliseconds(5);
  StartEngine(config);
  std::vector<Submitted> reads = SubmitMany(200, "/slow");
  // Timer hedges may spend every credit (fallbacks have their own).
  ExpectBudgetBound(reads, 200, kFraction, kBurst, kBurst);
  EXPECT_EQ(engine_->Snapshot().fallbacks, 0u);
}

// With one request slot and two attempt slots, any permit leaked by one
// way of ending a read would refuse, or starve, the next hedged read.
TEST_F(EngineLimitsTest, PermitsAreReleasedExactlyOnceWhateverTheOutcome) {
  const Handler script = Route({
      {"/ok", Always(Answer("ok"))},
      {"/hedged",
       PerAttempt({Answer("slow", absl::Seconds(3)), Answer("fast")})},
      {"/fallback",
       PerAttempt({Answer("busy", absl::ZeroDuration(), 503), Answer("ok")})},
      {"/both5xx", Always(Answer("busy", absl::ZeroDuration(), 503))},
      {"/transport", Always(Faulty(Fault::kResetAtOnce))},
      {"/toolarge", Always(Faulty(Fault::kHugeContentLength))},
      {"/streamed", Always(Streaming())},
      {"/deadline", Always(Hang())},
      {"/cancel", Always(Hang())},
  });
  StartReplicas({script, script});
  hedge::EngineConfig config = DefaultConfig();
  config.admission = hedge::AdmissionConfig{1, 2};
  config.upstreams[0].circuit.max_ejected_share = 0;  // both stay usable
  config.max_response_bytes = 1000;
  config.timeout = absl::Seconds(5);
  StartEngine(config);

  struct Case {
    const char* target;
    absl::StatusCode code;
  };
  const Case cases[] = {
      {"/ok", absl::StatusCode::kOk},
      {"/hedged", absl::StatusCode::kOk},
      {"/fallback", absl::StatusCode::kOk},
      {"/both5xx", absl::StatusCode::kOk},
      {"/transport", absl::StatusCode::kUnavailable},
      {"/toolarge", absl::StatusCode::kResourceExhausted},
      {"/streamed", absl::StatusCode::kResourceExhausted},
      {"/deadline", absl::StatusCode::kDeadlineExceeded},
      {"/cancel", absl::StatusCode::kCancelled},
  };
  int probe = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.target);
    hedge::EngineRead read = Get(c.target);
    if (c.code == absl::StatusCode::kDeadlineExceeded) {
      read.deadline = engine_->clock().Now() + absl::Milliseconds(100);
    }
    absl::StatusOr<hedge::EngineResponse> result;
    if (c.code == absl::StatusCode::kCancelled) {
      const int64_t before0 = replicas_[0]->requests_received();
      const int64_t before1 = replicas_[1]->requests_received();
      PendingRead& pending = NewPendingRead();
      const uint64_t id = Submit(std::move(read), pending);
      ASSERT_TRUE(replicas_[0]->WaitForRequests(before0 + 1, absl::Seconds(2)));
      ASSERT_TRUE(replicas_[1]->WaitForRequests(before1 + 1, absl::Seconds(2)));
      engine_->Cancel(id);
      result = pending.Wait();
    } else {
      result = Read(std::move(read));
    }
    EXPECT_EQ(result.status().code(), c.code) << result.status();
    ExpectIdle();

    // Both permits, and the request slot, are free again.
    absl::StatusOr<hedge::EngineResponse> hedged =
        Read(absl::StrCat("/hedged?probe=", probe++));
    ASSERT_TRUE(hedged.ok()) << hedged.status();
    EXPECT_EQ(hedged->body, "fast");
    EXPECT_EQ(hedged->trace.attempts, 2);
    ExpectIdle();
  }
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.rejected_overloaded, 0u);
  EXPECT_EQ(stats.skipped_no_capacity, 0u);

  // Nor was any released twice: one read in flight still fills the limit.
  PendingRead& held = NewPendingRead();
  const uint64_t held_id = Submit(Get("/cancel?held"), held);
  absl::StatusOr<uint64_t> second =
      engine_->Submit(Get("/ok?second"), NewPendingRead().Callback());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted)
      << second.status();
  engine_->Cancel(held_id);
  EXPECT_EQ(held.Wait().status().code(), absl::StatusCode::kCancelled);
  ExpectIdle();
}

TEST_F(EngineLimitsTest, UnknownUpstreamIsRefusedAtOnce) {
  StartReplicas({Always(Answer("ok"))});
  StartEngine();
  hedge::EngineRead read = Get("/x");
  read.upstream = "elsewhere";
  absl::StatusOr<uint64_t> id =
      engine_->Submit(std::move(read), NewPendingRead().Callback());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kNotFound) << id.status();
  EXPECT_EQ(engine_->Snapshot().requests, 0u);
  EXPECT_EQ(TotalRequests(), 0);
}

// Every way a read can end, all at once and over the limits: each admitted
// read completes exactly once (PendingRead checks), and nothing stays held.
TEST_F(EngineLimitsTest, ConcurrentMixedOutcomesLeaveNothingBehind) {
  const Handler script = Route({
      {"/ok", Always(Answer("ok"))},
      {"/hedged",
       PerAttempt({Answer("slow", absl::Milliseconds(300)), Answer("fast")})},
      {"/fallback",
       PerAttempt({Answer("busy", absl::ZeroDuration(), 503), Answer("ok")})},
      {"/5xx", Always(Answer("busy", absl::ZeroDuration(), 503))},
      {"/reset", Always(Faulty(Fault::kResetAtOnce))},
      {"/cut", Always(Faulty(Fault::kCloseMidBody, "0123456789"))},
      {"/huge", Always(Faulty(Fault::kHugeContentLength))},
      {"/streamed", Always(Streaming())},
      {"/hang", Always(Hang())},
  });
  StartReplicas({script, script, script});
  hedge::EngineConfig config = DefaultConfig();
  config.admission = hedge::AdmissionConfig{96, 64};
  config.upstreams[0].circuit.failure_threshold = 1'000'000;
  config.upstreams[0].budget = hedge::HedgeBudgetConfig{0.5, 10};
  config.max_response_bytes = 1000;
  config.timeout = absl::Milliseconds(400);
  StartEngine(config);

  const char* const kinds[] = {"/ok",  "/hedged", "/fallback", "/5xx", "/reset",
                               "/cut", "/huge",   "/streamed", "/hang"};
  constexpr int kReads = 270;
  std::vector<Submitted> admitted;
  int refused = 0;
  for (int i = 0; i < kReads; ++i) {
    Submitted read;
    read.pending = &NewPendingRead();
    absl::StatusOr<uint64_t> id = engine_->Submit(
        Get(absl::StrCat(kinds[i % 9], "?i=", i)), read.pending->Callback());
    if (!id.ok()) {
      EXPECT_EQ(id.status().code(), absl::StatusCode::kResourceExhausted);
      ++refused;
      continue;
    }
    read.id = *id;
    admitted.push_back(read);
    if (i % 7 == 0) engine_->Cancel(read.id);  // some at once
  }
  for (size_t i = 0; i < admitted.size(); i += 5) {
    engine_->Cancel(admitted[i].id);  // some later, some after completion
  }
  for (Submitted& read : admitted) {
    EXPECT_NE(read.pending->Wait().status().code(), absl::StatusCode::kUnknown);
  }
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.requests, admitted.size());
  EXPECT_EQ(stats.rejected_overloaded, static_cast<uint64_t>(refused));
  EXPECT_LE(static_cast<double>(stats.hedges),
            10 + 0.5 * static_cast<double>(stats.requests));
  ExpectIdle();
  // The engine still serves, with every permit back.
  for (const auto& replica : replicas_) {
    replica->SetHandler(Always(Answer("after")));
  }
  std::vector<Submitted> again = SubmitMany(64, "/again");
  for (Submitted& read : again) {
    const absl::StatusOr<hedge::EngineResponse>& result = read.pending->Wait();
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->body, "after");
  }
  ExpectIdle();
}

}  // namespace
}  // namespace tailgate::testing
