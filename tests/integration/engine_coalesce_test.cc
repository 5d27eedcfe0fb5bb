// Request coalescing (UpstreamConfig::coalesce) through real I/O: identical
// reads in flight at once share one upstream fetch, each caller with its
// own answer, deadline and cancellation; different requests, and the same
// request with different credentials, never share.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

// Long enough that every read of a test is submitted while the first is
// still waiting for its answer, even on a loaded machine.
constexpr absl::Duration kAnswerDelay = absl::Milliseconds(400);

class EngineCoalesceTest : public EngineFixture {
 protected:
  // One replica answering every target with its own path after
  // kAnswerDelay (or hanging), a coalescing default set that never hedges
  // within a test's reads, so every request the replica sees is a fetch.
  void StartCoalescing(bool hang = false, bool coalesce = true) {
    StartReplicas({[hang](const ReplicaRequest& request) {
      return hang ? Hang() : Answer(request.uri, kAnswerDelay);
    }});
    hedge::EngineConfig config = DefaultConfig();
    config.timeout = absl::Seconds(5);
    config.upstreams[0].hedge_delay = absl::Seconds(4);
    config.upstreams[0].coalesce = coalesce;
    StartEngine(config);
  }

  hedge::EngineRead WithHeader(std::string target, std::string name,
                               std::string value) const {
    hedge::EngineRead read = Get(std::move(target));
    read.headers.push_back({std::move(name), std::move(value)});
    return read;
  }

  hedge::UpstreamSnapshot Totals() const {
    return engine_->Snapshot().upstreams.at(0);
  }
};

TEST_F(EngineCoalesceTest, FiftyIdenticalReadsShareOneFetch) {
  StartCoalescing();
  std::vector<PendingRead*> reads;
  for (int i = 0; i < 50; ++i) {
    reads.push_back(&NewPendingRead());
    Submit(Get("/hot?k=1"), *reads.back());
  }
  for (PendingRead* read : reads) {
    const absl::StatusOr<hedge::EngineResponse>& response = read->Wait();
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, "/hot?k=1");  // each caller's own copy
    EXPECT_EQ(response->trace.attempts, 1);
  }
  EXPECT_LE(RequestsFor("/hot?k=1"), 3);
  EXPECT_EQ(TotalRequests(), RequestsFor("/hot?k=1"));
  const hedge::UpstreamSnapshot totals = Totals();
  EXPECT_EQ(totals.requests, 50u);  // each caller admitted as a read
  EXPECT_EQ(totals.coalesced_reads + RequestsFor("/hot?k=1"), 50u);
  EXPECT_EQ(totals.fetches_saved, totals.coalesced_reads);
  ExpectIdle();
}

TEST_F(EngineCoalesceTest, FiftyDifferentPathsReachTheReplicaFiftyTimes) {
  StartCoalescing();
  std::vector<PendingRead*> reads;
  for (int i = 0; i < 50; ++i) {
    reads.push_back(&NewPendingRead());
    Submit(Get(absl::StrCat("/key/", i)), *reads.back());
  }
  for (int i = 0; i < 50; ++i) {
    const absl::StatusOr<hedge::EngineResponse>& response = reads[i]->Wait();
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, absl::StrCat("/key/", i));
  }
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(RequestsFor(absl::StrCat("/key/", i)), 1) << i;
  }
  EXPECT_EQ(TotalRequests(), 50);
  EXPECT_EQ(Totals().coalesced_reads, 0u);
  EXPECT_EQ(Totals().fetches_saved, 0u);
}

TEST_F(EngineCoalesceTest, OffByDefault) {
  StartCoalescing(/*hang=*/false, /*coalesce=*/false);
  PendingRead& a = NewPendingRead();
  PendingRead& b = NewPendingRead();
  Submit(Get("/same"), a);
  Submit(Get("/same"), b);
  ASSERT_TRUE(a.Wait().ok()) << a.Wait().status();
  ASSERT_TRUE(b.Wait().ok()) << b.Wait().status();
  EXPECT_EQ(RequestsFor("/same"), 2);
  EXPECT_EQ(Totals().coalesced_reads, 0u);
}

TEST_F(EngineCoalesceTest, ACancelledCallerLeavesTheFetchToTheOthers) {
  StartCoalescing();
  PendingRead& leaving = NewPendingRead();
  PendingRead& staying = NewPendingRead();
  const uint64_t id = Submit(Get("/shared"), leaving);
  Submit(Get("/shared"), staying);
  engine_->Cancel(id);
  EXPECT_EQ(leaving.Wait().status().code(), absl::StatusCode::kCancelled);
  EXPECT_FALSE(staying.done());  // the fetch goes on for the other caller
  const absl::StatusOr<hedge::EngineResponse>& response = staying.Wait();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "/shared");
  EXPECT_EQ(RequestsFor("/shared"), 1);
  EXPECT_EQ(replicas_[0]->client_disconnects_before_response(), 0);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.cancelled, 1u);
  EXPECT_EQ(stats.upstreams.at(0).coalesced_reads, 1u);
  EXPECT_EQ(stats.upstreams.at(0).fetches_saved, 0u);  // one caller answered
  ExpectIdle();
}

TEST_F(EngineCoalesceTest, TheLastCallerLeavingCancelsTheFetch) {
  StartCoalescing(/*hang=*/true);
  PendingRead& first = NewPendingRead();
  PendingRead& second = NewPendingRead();
  const uint64_t a = Submit(Get("/stuck"), first);
  const uint64_t b = Submit(Get("/stuck"), second);
  ASSERT_TRUE(replicas_[0]->WaitForRequests(1, absl::Seconds(5)));
  engine_->Cancel(a);
  EXPECT_EQ(first.Wait().status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(replicas_[0]->client_disconnects_before_response(), 0);
  engine_->Cancel(b);
  EXPECT_EQ(second.Wait().status().code(), absl::StatusCode::kCancelled);
  ExpectIdle();  // the fetch went before its last caller heard back
  // The fetch's attempt went away: its connection was closed.
  EXPECT_TRUE(
      replicas_[0]->WaitForDisconnectsBeforeResponse(1, absl::Seconds(5)));
  EXPECT_EQ(RequestsFor("/stuck"), 1);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.cancelled, 2u);  // the callers, not the fetch
  // A cancelled fetch says nothing of its replica.
  EXPECT_EQ(stats.backend_failures, 0u);
  ExpectIdle();
}

TEST_F(EngineCoalesceTest, TheLastCallerDeadlineEndsTheFetch) {
  StartCoalescing(/*hang=*/true);
  PendingRead& first = NewPendingRead();
  PendingRead& second = NewPendingRead();
  for (auto [pending, after] :
       {std::make_pair(&first, absl::Milliseconds(80)),
        std::make_pair(&second, absl::Milliseconds(160))}) {
    hedge::EngineRead read = Get("/stuck");
    read.deadline = engine_->clock().Now() + after;
    Submit(std::move(read), *pending);
  }
  EXPECT_EQ(first.Wait().status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(second.Wait().status().code(), absl::StatusCode::kDeadlineExceeded);
  ExpectIdle();
  EXPECT_TRUE(
      replicas_[0]->WaitForDisconnectsBeforeResponse(1, absl::Seconds(5)));
  EXPECT_EQ(RequestsFor("/stuck"), 1);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.timeouts, 2u);  // the callers, not the fetch
  // The callers' own deadlines say nothing of the replica.
  EXPECT_EQ(stats.backend_failures, 0u);
}

TEST_F(EngineCoalesceTest, ACallerWithAnEarlierDeadlineEndsAlone) {
  StartCoalescing();
  PendingRead& patient = NewPendingRead();
  PendingRead& hurried = NewPendingRead();
  Submit(Get("/slow"), patient);
  hedge::EngineRead short_read = Get("/slow");
  short_read.deadline = engine_->clock().Now() + absl::Milliseconds(50);
  Submit(std::move(short_read), hurried);
  const absl::Status hurried_status = hurried.Wait().status();
  EXPECT_EQ(hurried_status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(hurried_status.message(),
            "the caller's deadline passed before a replica answered");
  const absl::StatusOr<hedge::EngineResponse>& response = patient.Wait();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "/slow");
  EXPECT_GE(response->trace.latency, kAnswerDelay);
  EXPECT_EQ(RequestsFor("/slow"), 1);
  EXPECT_EQ(engine_->Snapshot().timeouts, 1u);
  ExpectIdle();
}

TEST_F(EngineCoalesceTest, DifferentCredentialsAreNotCoalesced) {
  StartCoalescing();
  std::vector<std::pair<hedge::EngineRead, PendingRead*>> reads;
  const auto add = [&](hedge::EngineRead read) {
    reads.emplace_back(std::move(read), &NewPendingRead());
  };
  add(WithHeader("/me", "Authorization", "Bearer alice"));
  add(WithHeader("/me", "Authorization", "Bearer bob"));
  // The same credential under a name in another case: one fetch with
  // alice's.
  add(WithHeader("/me", "authorization", "Bearer alice"));
  // Values are compared byte for byte.
  add(WithHeader("/me", "Authorization", "bearer alice"));
  add(WithHeader("/me", "Cookie", "session=1"));
  add(WithHeader("/me", "COOKIE", "session=1"));
  add(WithHeader("/me", "Cookie", "session=2"));
  add(Get("/me"));  // no credential at all
  for (auto& [read, pending] : reads) Submit(read, *pending);
  for (auto& [read, pending] : reads) {
    ASSERT_TRUE(pending->Wait().ok()) << pending->Wait().status();
  }
  // alice, bob, "bearer alice", session=1, session=2, none.
  EXPECT_EQ(RequestsFor("/me"), 6);
  EXPECT_EQ(Totals().coalesced_reads, 2u);
  int with_alice = 0;
  for (const ReplicaRequest& request : replicas_[0]->requests()) {
    for (const auto& [name, value] : request.headers) {
      if (value == "Bearer alice") ++with_alice;
    }
  }
  EXPECT_EQ(with_alice, 1);
}

// The hedge budget is earned per upstream fetch, not per caller: ten
// callers sharing one fetch deposit one read's credit.
TEST_F(EngineCoalesceTest, AFetchEarnsHedgeCreditOnce) {
  // /spend: the first request slow, the next one fast; /shared: fast.
  const Handler handler =
      Route({{"/spend", PerAttempt({Answer("slow", absl::Seconds(2)),
                                    Answer("fast", kAnswerDelay)})},
             {"/shared", Always(Answer("shared", kAnswerDelay))}});
  StartReplicas({handler, handler});
  hedge::EngineConfig config = DefaultConfig();
  config.timeout = absl::Seconds(5);
  config.upstreams[0].budget = hedge::HedgeBudgetConfig{0.1, 2};
  config.upstreams[0].coalesce = true;
  StartEngine(config);
  // One read alone: its 0.1 finds the balance full (2), its hedge
  // spends 1.
  absl::StatusOr<hedge::EngineResponse> hedged = Read("/spend");
  ASSERT_TRUE(hedged.ok()) << hedged.status();
  EXPECT_TRUE(hedged->trace.hedged);
  EXPECT_NEAR(Totals().hedge_credits, 1.0, 1e-9);
  // Ten callers of one fetch that never hedges: 0.1 more, not 1.
  std::vector<PendingRead*> reads;
  for (int i = 0; i < 10; ++i) {
    hedge::EngineRead read = Get("/shared");
    read.hedge_disabled = true;
    reads.push_back(&NewPendingRead());
    Submit(std::move(read), *reads.back());
  }
  for (PendingRead* read : reads) {
    ASSERT_TRUE(read->Wait().ok()) << read->Wait().status();
  }
  EXPECT_LE(RequestsFor("/shared"), 3);
  const hedge::UpstreamSnapshot totals = Totals();
  EXPECT_EQ(totals.coalesced_reads + RequestsFor("/shared"), 10u);
  EXPECT_NEAR(totals.hedge_credits, 1.0 + 0.1 * RequestsFor("/shared"), 1e-9);
  EXPECT_EQ(totals.requests, 11u);
}

}  // namespace
}  // namespace tailgate::testing
