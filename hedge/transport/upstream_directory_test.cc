// The refresh and drain logic of replica sets that change under reads:
// DNS answers and reloads replayed on a FakeClock against a scripted
// resolver, with a held generation standing for the reads in flight.

#include "hedge/transport/upstream_directory.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "hedge/discovery/resolver.h"
#include "hedge/hygiene/replica_url.h"
#include "hedge/sync/mutex.h"
#include "tests/fake_clock.h"

namespace tailgate::hedge::transport {
namespace {

// Answers what the test last told it; counts lookups.
class ScriptedResolver final : public discovery::Resolver {
 public:
  void Set(const std::string& name,
           absl::StatusOr<std::vector<std::string>> answer) {
    MutexLock lock(&mu_);
    answers_.insert_or_assign(name, std::move(answer));
  }
  int lookups() const {
    MutexLock lock(&mu_);
    return lookups_;
  }
  absl::StatusOr<std::vector<std::string>> Resolve(
      absl::string_view name) override {
    MutexLock lock(&mu_);
    ++lookups_;
    auto it = answers_.find(std::string(name));
    if (it == answers_.end()) return absl::NotFoundError("unknown name");
    return it->second;
  }

 private:
  mutable Mutex mu_;
  std::map<std::string, absl::StatusOr<std::vector<std::string>>> answers_
      ABSL_GUARDED_BY(mu_);
  int lookups_ ABSL_GUARDED_BY(mu_) = 0;
};

UpstreamConfig Set(const std::string& name, const std::string& replicas) {
  UpstreamConfig config;
  config.name = name;
  config.replicas = *hygiene::ParseReplicaList(replicas);
  config.circuit.failure_threshold = 1;
  config.circuit.cooldown = absl::Seconds(10);
  return config;
}

std::vector<std::string> Labels(const Upstream& upstream) {
  std::vector<std::string> labels;
  for (size_t i = 0; i < upstream.size(); ++i) {
    labels.push_back(hygiene::ReplicaLabel(upstream.replica(i)));
  }
  return labels;
}

// The labels PickPrimary returns over `reads` reads.
std::set<std::string> Picked(Upstream& upstream, absl::Time now,
                             int reads = 12) {
  std::set<std::string> picked;
  for (int i = 0; i < reads; ++i) {
    std::optional<ReplicaPick> pick = upstream.picker().PickPrimary(now);
    if (!pick.has_value()) continue;
    upstream.picker().breaker(pick->replica).OnCancel(pick->ticket);
    picked.insert(hygiene::ReplicaLabel(upstream.replica(pick->replica)));
  }
  return picked;
}

class UpstreamDirectoryTest : public ::testing::Test {
 protected:
  UpstreamDirectoryTest() : directory_(EngineConfig(), clock_, nullptr, dns_) {}

  testing::FakeClock clock_;
  ScriptedResolver dns_;
  UpstreamDirectory directory_;
};

TEST_F(UpstreamDirectoryTest, ResolvedNameIsOneReplicaPerAddress) {
  dns_.Set("shard.test", std::vector<std::string>{"127.0.0.3", "127.0.0.2"});
  directory_.Replace({Set("d", "dns://shard.test:8080"),
                      Set("s", "http://127.0.0.1:81")});
  std::shared_ptr<Upstream> d = directory_.Find("d");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(Labels(*d), (std::vector<std::string>{"shard.test@127.0.0.2",
                                                  "shard.test@127.0.0.3"}));
  EXPECT_EQ(Labels(*directory_.Find("s")),
            std::vector<std::string>{"http://127.0.0.1:81"});
  EXPECT_EQ(directory_.NextRefresh(), clock_.Now() + absl::Seconds(5));
}

TEST_F(UpstreamDirectoryTest, NewAnswerDrainsTheVanishedAndKeepsThePersisting) {
  dns_.Set("shard.test", std::vector<std::string>{"127.0.0.2", "127.0.0.3",
                                                  "127.0.0.4"});
  UpstreamConfig d = Set("d", "dns://shard.test:8080");
  d.refresh_interval = absl::Milliseconds(200);
  directory_.Replace({d});
  // A read in flight holds the first generation.
  std::shared_ptr<Upstream> before = directory_.Find("d");
  // 127.0.0.3 is ejected.
  before->picker().breaker(1).Eject(clock_.Now(),
                                    hedge::EjectReason::kConsecutive);

  dns_.Set("shard.test", std::vector<std::string>{"127.0.0.3", "127.0.0.4",
                                                  "127.0.0.5"});
  EXPECT_FALSE(directory_.RefreshDue());  // not due yet
  clock_.Advance(absl::Milliseconds(200));
  EXPECT_TRUE(directory_.RefreshDue());

  std::shared_ptr<Upstream> after = directory_.Find("d");
  EXPECT_EQ(Labels(*after),
            (std::vector<std::string>{"shard.test@127.0.0.3",
                                      "shard.test@127.0.0.4",
                                      "shard.test@127.0.0.5"}));
  // The persisting replica kept its open circuit; the newcomer takes reads.
  EXPECT_EQ(after->picker().breaker(0).Snapshot(clock_.Now()).state, CircuitState::kOpen);
  EXPECT_EQ(Picked(*after, clock_.Now()),
            (std::set<std::string>{"shard.test@127.0.0.4",
                                   "shard.test@127.0.0.5"}));
  // The old generation never starts another attempt on the vanished one.
  EXPECT_EQ(Picked(*before, clock_.Now()),
            std::set<std::string>{"shard.test@127.0.0.4"});
  EXPECT_FALSE(before->picker().HasAlternate(2, clock_.Now()));
}

TEST_F(UpstreamDirectoryTest, FailedOrEmptyLookupKeepsTheLastGoodSet) {
  dns_.Set("shard.test", std::vector<std::string>{"127.0.0.2", "127.0.0.3"});
  directory_.Replace({Set("d", "dns://shard.test:8080")});
  std::shared_ptr<Upstream> good = directory_.Find("d");

  dns_.Set("shard.test", absl::UnavailableError("server failure"));
  clock_.Advance(absl::Seconds(5));
  EXPECT_FALSE(directory_.RefreshDue());
  dns_.Set("shard.test", absl::NotFoundError("no address"));
  clock_.Advance(absl::Seconds(5));
  EXPECT_FALSE(directory_.RefreshDue());

  EXPECT_EQ(directory_.Find("d"), good);  // same generation, nothing dropped
  EngineSnapshot snapshot;
  directory_.AddTo(snapshot);
  ASSERT_EQ(snapshot.upstreams.size(), 1u);
  EXPECT_EQ(snapshot.upstreams[0].dns_refresh_failures, 2u);
  EXPECT_EQ(snapshot.upstreams[0].replicas, 2u);
  EXPECT_EQ(snapshot.dns_refresh_failures, 2u);
  ASSERT_EQ(snapshot.replicas.size(), 2u);
  EXPECT_EQ(snapshot.replicas[0].url, "shard.test@127.0.0.2");
  EXPECT_EQ(snapshot.replicas[0].address, "127.0.0.2");
}

TEST_F(UpstreamDirectoryTest, NameNeverResolvedLeavesTheSetEmptyUntilItIs) {
  directory_.Replace({Set("d", "dns://shard.test:8080")});
  EXPECT_EQ(directory_.Find("d")->size(), 0u);
  dns_.Set("shard.test", std::vector<std::string>{"127.0.0.2"});
  clock_.Advance(absl::Seconds(5));
  EXPECT_TRUE(directory_.RefreshDue());
  EXPECT_EQ(directory_.Find("d")->size(), 1u);
}

TEST_F(UpstreamDirectoryTest, ReloadKeepsStateOfWhatPersists) {
  directory_.Replace({Set("a", "http://127.0.0.1:81,http://127.0.0.1:82"),
                      Set("b", "http://127.0.0.1:91")});
  std::shared_ptr<Upstream> a = directory_.Find("a");
  ASSERT_TRUE(a->budget().TryConsume());
  const double credits = a->budget().credits();
  a->totals().requests = 7;
  a->picker().breaker(0).Eject(clock_.Now(), hedge::EjectReason::kConsecutive);

  // :82 leaves, :83 joins, b goes, c comes; a's policy is unchanged.
  directory_.Replace({Set("a", "http://127.0.0.1:81,http://127.0.0.1:83"),
                      Set("c", "http://127.0.0.1:99")});
  std::shared_ptr<Upstream> a2 = directory_.Find("a");
  EXPECT_NE(a2, a);
  EXPECT_EQ(directory_.Find("b"), nullptr);
  EXPECT_NE(directory_.Find("c"), nullptr);
  EXPECT_DOUBLE_EQ(a2->budget().credits(), credits);
  EXPECT_EQ(a2->totals().requests.load(), 7u);
  EXPECT_EQ(a2->picker().breaker(0).Snapshot(clock_.Now()).state, CircuitState::kOpen);
  EXPECT_EQ(a2->picker().breaker(1).Snapshot(clock_.Now()).state, CircuitState::kClosed);
  EXPECT_EQ(Picked(*a, clock_.Now()), std::set<std::string>{});  // :82 retired

  // A new burst is a new budget, full; new circuit settings new breakers.
  UpstreamConfig changed = Set("a", "http://127.0.0.1:81,http://127.0.0.1:83");
  changed.budget.burst = 5;
  changed.circuit.failure_threshold = 3;
  directory_.Replace({changed});
  std::shared_ptr<Upstream> a3 = directory_.Find("a");
  EXPECT_DOUBLE_EQ(a3->budget().credits(), 5);
  EXPECT_EQ(a3->picker().breaker(0).Snapshot(clock_.Now()).state, CircuitState::kClosed);
  EXPECT_EQ(a3->totals().requests.load(), 7u);
}

TEST_F(UpstreamDirectoryTest, ReloadLooksUpNewNamesBeforePublishing) {
  dns_.Set("new.test", std::vector<std::string>{"127.0.0.7"});
  directory_.Replace({Set("a", "http://127.0.0.1:81")});
  EXPECT_EQ(dns_.lookups(), 0);
  directory_.Replace({Set("a", "http://127.0.0.1:81, dns://new.test:80")});
  EXPECT_EQ(dns_.lookups(), 1);
  EXPECT_EQ(Labels(*directory_.Find("a")),
            (std::vector<std::string>{"http://127.0.0.1:81",
                                      "new.test@127.0.0.7"}));
  // A known name is not looked up again before it is due.
  directory_.Replace({Set("a", "dns://new.test:80")});
  EXPECT_EQ(dns_.lookups(), 1);
  EXPECT_EQ(directory_.Find("a")->size(), 1u);
}

TEST_F(UpstreamDirectoryTest, UpstreamCapRefusesOverItsMaxRequests) {
  UpstreamConfig capped = Set("a", "http://127.0.0.1:81");
  capped.max_requests = 2;
  directory_.Replace({capped, Set("b", "http://127.0.0.1:82")});
  std::shared_ptr<Upstream> a = directory_.Find("a");
  std::optional<Permit> first = a->TryAdmit();
  std::optional<Permit> second = a->TryAdmit();
  ASSERT_TRUE(first.has_value() && second.has_value());
  EXPECT_FALSE(a->TryAdmit().has_value());  // the edge: 2 of 2
  first->Release();
  EXPECT_TRUE(a->TryAdmit().has_value());
  // An upstream without a cap never refuses on its own.
  std::shared_ptr<Upstream> b = directory_.Find("b");
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(b->TryAdmit().has_value());
}

}  // namespace
}  // namespace tailgate::hedge::transport
