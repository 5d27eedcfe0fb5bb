// Named upstreams through real I/O: each replica set has its own hedge
// budget, and its own totals in the engine's snapshot; its own timeout,
// response limit and in-flight cap hold at their edges; SetUpstreams
// swaps the sets under a read in flight.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "hedge/hygiene/replica_url.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

class EngineUpstreamsTest : public EngineFixture {
 protected:
  // Replicas 0-1 serve upstream "slow", 2-3 upstream "other"; each set
  // hedges after 5 ms with a budget that starts at 3 credits and earns
  // 0.01 per read. A timer hedge leaves a reserve of 1 credit for
  // fallbacks, so each set can pay for two hedges before it runs dry.
  void StartTwoUpstreams() {
    hedge::EngineConfig config;
    const std::vector<std::string> urls = ReplicaUrls();
    for (const auto& [name, first] :
         {std::pair<std::string, size_t>{"slow", 0}, {"other", 2}}) {
      hedge::UpstreamConfig& upstream = config.upstreams.emplace_back();
      upstream.name = name;
      absl::StatusOr<std::vector<hygiene::ReplicaUrl>> replicas =
          hygiene::ParseReplicaList(
              absl::StrCat(urls[first], ",", urls[first + 1]));
      ASSERT_TRUE(replicas.ok()) << replicas.status();
      upstream.replicas = *replicas;
      upstream.hedge_delay = absl::Milliseconds(5);
      upstream.budget = hedge::HedgeBudgetConfig{0.01, 2};
      // Hedges only: a give-up fallback (retry budget) would add extra
      // attempts of its own to the slow set's.
      upstream.give_up.factor = 0;
    }
    absl::StatusOr<std::unique_ptr<hedge::Engine>> engine =
        CreateEngine(std::move(config));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
  }

  hedge::EngineRead GetFrom(std::string upstream, std::string target) const {
    hedge::EngineRead read = Get(std::move(target));
    read.upstream = std::move(upstream);
    return read;
  }

  static const hedge::UpstreamSnapshot* Find(const hedge::EngineSnapshot& s,
                                             const std::string& name) {
    for (const hedge::UpstreamSnapshot& upstream : s.upstreams) {
      if (upstream.name == name) return &upstream;
    }
    return nullptr;
  }
};

TEST_F(EngineUpstreamsTest, SlowUpstreamCannotSpendAnotherUpstreamsCredits) {
  const Handler script = Route({
      {"/slow", Always(Answer("slow", absl::Milliseconds(60)))},
      {"/other",
       PerAttempt({Answer("late", absl::Seconds(2)), Answer("fast")})},
  });
  StartReplicas({script, script, script, script});
  StartTwoUpstreams();

  // Every read of "slow" wants a hedge; its credits pay for two.
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<hedge::EngineResponse> response =
        Read(GetFrom("slow", absl::StrCat("/slow?i=", i)));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->trace.hedged, i < 2) << i;
  }
  hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.skipped_no_budget, 2u);

  // "other" still has its own credits: its slow primary is hedged, and the
  // hedge answers.
  absl::StatusOr<hedge::EngineResponse> other =
      Read(GetFrom("other", "/other?x"));
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->body, "fast");
  EXPECT_TRUE(other->trace.hedged);
  EXPECT_TRUE(other->trace.hedge_won);

  stats = engine_->Snapshot();
  ASSERT_EQ(stats.upstreams.size(), 2u);
  const hedge::UpstreamSnapshot* slow = Find(stats, "slow");
  const hedge::UpstreamSnapshot* other_stats = Find(stats, "other");
  ASSERT_NE(slow, nullptr);
  ASSERT_NE(other_stats, nullptr);
  EXPECT_EQ(slow->requests, 4u);
  EXPECT_EQ(slow->hedges, 2u);
  EXPECT_NEAR(slow->hedge_credits, 0.03, 1e-6);
  EXPECT_EQ(slow->hedge_delay, absl::Milliseconds(5));
  EXPECT_EQ(other_stats->requests, 1u);
  EXPECT_EQ(other_stats->hedges, 1u);
  EXPECT_EQ(other_stats->hedge_wins, 1u);
  EXPECT_NEAR(other_stats->hedge_credits, 1, 1e-6);
  EXPECT_NEAR(stats.hedge_credits, 1.03, 1e-6);  // the sum over upstreams
  for (const hedge::ReplicaSnapshot& replica : stats.replicas) {
    const bool in_slow =
        replica.url == ReplicaUrls()[0] || replica.url == ReplicaUrls()[1];
    EXPECT_EQ(replica.upstream, in_slow ? "slow" : "other") << replica.url;
  }
  ExpectIdle();
}

TEST_F(EngineUpstreamsTest, UnknownUpstreamIsNotFoundNamingIt) {
  StartReplicas({Always(Answer("ok")), Always(Answer("ok")),
                 Always(Answer("ok")), Always(Answer("ok"))});
  StartTwoUpstreams();
  absl::StatusOr<hedge::EngineResponse> response = Read(GetFrom("", "/x"));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(response.status().message(), "unknown upstream \"\"");
  response = Read(GetFrom("nope", "/x"));
  EXPECT_EQ(response.status().message(), "unknown upstream \"nope\"");
}

// "tight": its own limits (250 ms, 10 bytes, 1 read in flight) under the
// engine's 2 s and 4 MiB; "loose": the engine's.
hedge::EngineConfig TightAndLoose(const std::vector<std::string>& urls) {
  hedge::EngineConfig config = EngineFixture::DefaultConfig();
  config.timeout = absl::Seconds(2);
  config.upstreams.clear();
  for (const std::string name : {"tight", "loose"}) {
    hedge::UpstreamConfig& upstream = config.upstreams.emplace_back();
    upstream.name = name;
    upstream.replicas = *hygiene::ParseReplicaList(urls[0]);
    upstream.hedge_delay = absl::Milliseconds(100);
  }
  config.upstreams[0].timeout = absl::Milliseconds(250);
  config.upstreams[0].max_response_bytes = 10;
  config.upstreams[0].max_requests = 1;
  return config;
}

TEST_F(EngineUpstreamsTest, UpstreamLimitsHoldAtTheirEdges) {
  StartReplicas({Route({
      {"/ten", Always(Answer("0123456789"))},
      {"/eleven", Always(Answer("0123456789A"))},
      {"/slow", Always(Answer("late", absl::Milliseconds(600)))},
      {"/hang", Always(Hang())},
  })});
  absl::StatusOr<std::unique_ptr<hedge::Engine>> engine =
      CreateEngine(TightAndLoose(ReplicaUrls()));
  ASSERT_TRUE(engine.ok()) << engine.status();
  engine_ = *std::move(engine);

  // Response limit: exactly 10 bytes pass, 11 do not; "loose" takes 11.
  absl::StatusOr<hedge::EngineResponse> ten = Read(GetFrom("tight", "/ten"));
  ASSERT_TRUE(ten.ok()) << ten.status();
  EXPECT_EQ(ten->body, "0123456789");
  EXPECT_EQ(Read(GetFrom("tight", "/eleven")).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(Read(GetFrom("loose", "/eleven")).ok());

  // Timeout: "tight" gives up at 250 ms, "loose" waits for the answer.
  const absl::StatusOr<hedge::EngineResponse> slow =
      Read(GetFrom("tight", "/slow"));
  EXPECT_EQ(slow.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(slow.status().message(), "250ms"))
      << slow.status();
  EXPECT_TRUE(Read(GetFrom("loose", "/slow")).ok());

  // In-flight cap: one read of "tight" at a time; "loose" is not held up.
  PendingRead& hanging = NewPendingRead();
  hedge::EngineRead hang = GetFrom("tight", "/hang");
  hang.deadline = engine_->clock().Now() + absl::Milliseconds(200);
  Submit(std::move(hang), hanging);
  const absl::Status refused =
      engine_->Submit(GetFrom("tight", "/ten"), [](auto) {}).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(refused.message(), "\"tight\"")) << refused;
  EXPECT_TRUE(Read(GetFrom("loose", "/ten")).ok());
  EXPECT_EQ(hanging.Wait().status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(Read(GetFrom("tight", "/ten")).ok());  // its slot is free again
}

TEST_F(EngineUpstreamsTest, SetUpstreamsSwapsUnderAReadInFlight) {
  StartReplicas(
      {Always(Answer("one", absl::Milliseconds(300))), Always(Answer("two"))});
  const std::vector<std::string> urls = ReplicaUrls();
  hedge::EngineConfig config = DefaultConfig();
  config.upstreams[0].replicas = *hygiene::ParseReplicaList(urls[0]);
  config.upstreams[0].hedge_delay = absl::Seconds(2);
  config.timeout = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<hedge::Engine>> engine = CreateEngine(config);
  ASSERT_TRUE(engine.ok()) << engine.status();
  engine_ = *std::move(engine);

  PendingRead& before = NewPendingRead();
  Submit(Get("/x"), before);
  ASSERT_TRUE(replicas_[0]->WaitForRequests(1, absl::Seconds(5)));
  // The only replica is replaced while its read is in flight.
  std::vector<hedge::UpstreamConfig> next = config.upstreams;
  next[0].replicas = *hygiene::ParseReplicaList(urls[1]);
  ASSERT_TRUE(engine_->SetUpstreams(next).ok());
  absl::StatusOr<hedge::EngineResponse> after = Read(Get("/x"));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->body, "two");
  const absl::StatusOr<hedge::EngineResponse>& first = before.Wait();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->body, "one");  // finished on the set it started with
  EXPECT_EQ(replicas_[0]->requests_received(), 1);

  // A set the running limits refuse changes nothing.
  next[0].timeout = absl::Seconds(6);
  const absl::Status refused = engine_->SetUpstreams(next);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Read(Get("/x")).ok());
}

}  // namespace
}  // namespace tailgate::testing
