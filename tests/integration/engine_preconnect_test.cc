// Warm connections (UpstreamConfig::preconnect) against a real loopback
// replica: a spare connection is opened after curl's first one, handed to
// curl when it needs a new connection, replaced (each kPreconnectRefillDelay
// after the need), and never handed out when the replica closed it or it is
// older than its limit.
//
// ReplicaRequest::connection numbers connections in order of accept, so
// "the request arrived on connection 1" shows whether curl used the spare
// that was already open or made a new one.

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/fake_clock.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

constexpr absl::Duration kWait = absl::Seconds(5);

hedge::EngineConfig PreconnectConfig(int preconnect) {
  hedge::EngineConfig config = EngineFixture::DefaultConfig();
  config.upstreams[0].preconnect = preconnect;
  return config;
}

Handler HangOr(ReplicaResponse answer) {
  return Route({{"/hang", Always(Hang())}, {"/", Always(std::move(answer))}});
}

class EnginePreconnectTest : public EngineFixture {
 protected:
  // The accept number of the connection that carried `target`, or -1.
  int64_t ConnectionOf(const std::string& target) const {
    for (const ReplicaRequest& request : replicas_[0]->requests()) {
      if (request.uri == target)
        return static_cast<int64_t>(request.connection);
    }
    return -1;
  }

  // Makes curl drop its cached connection: a read that hangs on it is
  // cancelled, which closes the connection.
  void DropCachedConnection(const std::string& target) {
    const int64_t before = replicas_[0]->requests_received();
    PendingRead& pending = NewPendingRead();
    const uint64_t id = Submit(Get(target), pending);
    ASSERT_TRUE(replicas_[0]->WaitForRequests(before + 1, kWait));
    engine_->Cancel(id);
    EXPECT_EQ(pending.Wait().status().code(), absl::StatusCode::kCancelled);
  }

  // Waits until the engine holds `n` spares (they are opened on the loop
  // thread after the read that asked for them has completed).
  bool WaitForIdleSpares(int64_t n) {
    const absl::Time limit = absl::Now() + kWait;
    while (engine_->Snapshot().warm_connections.idle != n) {
      if (absl::Now() > limit) return false;
      absl::SleepFor(absl::Milliseconds(1));
    }
    return true;
  }

  // Waits until the loop has run `n` more iterations.
  bool WaitForLoopIterations(uint64_t n) {
    const uint64_t target = engine_->Snapshot().loop_iterations + n;
    const absl::Time limit = absl::Now() + kWait;
    while (engine_->Snapshot().loop_iterations < target) {
      if (absl::Now() > limit) return false;
      absl::SleepFor(absl::Milliseconds(1));
    }
    return true;
  }

  FakeClock clock_;  // outlives the engine, which TearDown destroys
};

TEST_F(EnginePreconnectTest, NoSpareWhenDisabled) {
  StartReplicas({HangOr(Answer("a"))});
  StartEngine(PreconnectConfig(0));
  ASSERT_TRUE(Read("/a").ok());
  DropCachedConnection("/hang1");
  ASSERT_TRUE(Read("/b").ok());
  // Connection 0 carried /a and /hang1; /b needed a new one.
  EXPECT_EQ(ConnectionOf("/b"), 1);
  const hedge::WarmConnectionStats warm = engine_->Snapshot().warm_connections;
  EXPECT_EQ(warm.opened, 0u);
  EXPECT_EQ(warm.used, 0u);
}

TEST_F(EnginePreconnectTest, SpareIsOpenedUsedAndReplaced) {
  StartReplicas({HangOr(Answer("a"))});
  StartEngine(PreconnectConfig(1));
  ASSERT_TRUE(Read("/a").ok());
  // curl's connection plus one spare.
  ASSERT_TRUE(replicas_[0]->WaitForOpenConnections(2, kWait));
  // (The replica may count the accept before the loop counts the spare.)
  EXPECT_TRUE(WaitForIdleSpares(1));

  DropCachedConnection("/hang1");
  absl::StatusOr<hedge::EngineResponse> response = Read("/b");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "a");
  EXPECT_EQ(ConnectionOf("/b"), 1);  // the spare, accepted before the read
  // Replaced: curl's connection (the former spare) plus a new spare.
  ASSERT_TRUE(WaitForIdleSpares(1));
  ASSERT_TRUE(replicas_[0]->WaitForOpenConnections(2, kWait));
  const hedge::WarmConnectionStats warm = engine_->Snapshot().warm_connections;
  EXPECT_EQ(warm.opened, 2u);
  EXPECT_EQ(warm.used, 1u);
  EXPECT_EQ(warm.discarded, 0u);
  EXPECT_EQ(warm.idle, 1);
}

TEST_F(EnginePreconnectTest, KeepsAsManySparesAsConfigured) {
  StartReplicas({Always(Answer("a"))});
  StartEngine(PreconnectConfig(3));
  ASSERT_TRUE(Read("/a").ok());
  ASSERT_TRUE(replicas_[0]->WaitForOpenConnections(4, kWait));
  EXPECT_TRUE(WaitForIdleSpares(3));
  // Reads that reuse curl's connection need no more spares.
  ASSERT_TRUE(Read("/b").ok());
  EXPECT_EQ(engine_->Snapshot().warm_connections.opened, 3u);
}

TEST_F(EnginePreconnectTest, SpareClosedByTheReplicaIsNotHandedOut) {
  StartReplicas({Always(Answer("old"))});
  const int port = replicas_[0]->port();
  StartEngine(PreconnectConfig(1));
  ASSERT_TRUE(Read("/a").ok());
  ASSERT_TRUE(replicas_[0]->WaitForOpenConnections(2, kWait));

  // The replica restarts on its port: both of the sidecar's connections to
  // it are closed by the peer.
  replicas_[0].reset();
  ReplicaOptions options;
  options.port = port;
  absl::StatusOr<std::unique_ptr<Replica>> restarted =
      Replica::Start(Always(Answer("new")), options);
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  replicas_[0] = *std::move(restarted);

  absl::StatusOr<hedge::EngineResponse> response = Read("/b");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "new");
  EXPECT_EQ(ConnectionOf("/b"), 0);  // a fresh connection to the new replica
  const hedge::WarmConnectionStats warm = engine_->Snapshot().warm_connections;
  EXPECT_EQ(warm.used, 0u);
  EXPECT_EQ(warm.discarded, 1u);
}

TEST_F(EnginePreconnectTest, FailedAttemptClosesTheSparesToItsReplica) {
  StartReplicas(
      {Route({{"/bad", Always(Answer("down", absl::ZeroDuration(), 503))},
              {"/", Always(Answer("a"))}})});
  StartEngine(PreconnectConfig(1));
  ASSERT_TRUE(Read("/a").ok());
  ASSERT_TRUE(replicas_[0]->WaitForOpenConnections(2, kWait));

  absl::StatusOr<hedge::EngineResponse> response = Read("/bad");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 503);
  // Only curl's keep-alive connection is left.
  EXPECT_TRUE(replicas_[0]->WaitForOpenConnections(1, kWait))
      << replicas_[0]->open_connections();
  const hedge::WarmConnectionStats warm = engine_->Snapshot().warm_connections;
  EXPECT_EQ(warm.discarded, 1u);
  EXPECT_EQ(warm.idle, 0);
}

// The age limit (30 s) at its edge: a spare exactly that old is still
// used, one a nanosecond older is closed instead.
TEST_F(EnginePreconnectTest, SpareOlderThanMaxIdleIsDiscarded) {
  StartReplicas({HangOr(Answer("a"))});
  StartEngineWithUrls(PreconnectConfig(1), ReplicaUrls(), clock_);
  ASSERT_TRUE(Read("/a").ok());
  clock_.Advance(hedge::kPreconnectRefillDelay);
  ASSERT_TRUE(replicas_[0]->WaitForOpenConnections(2, kWait));

  DropCachedConnection("/hang1");
  clock_.Advance(absl::Seconds(30));
  ASSERT_TRUE(Read("/b").ok());
  EXPECT_EQ(ConnectionOf("/b"), 1);  // 30 s old: used
  clock_.Advance(hedge::kPreconnectRefillDelay);
  ASSERT_TRUE(WaitForIdleSpares(1));

  DropCachedConnection("/hang2");
  clock_.Advance(absl::Seconds(30) + absl::Nanoseconds(1));
  ASSERT_TRUE(Read("/c").ok());
  EXPECT_EQ(ConnectionOf("/c"), 3);  // spare 2 was too old: a new one
  const hedge::WarmConnectionStats warm = engine_->Snapshot().warm_connections;
  EXPECT_EQ(warm.used, 1u);
  EXPECT_EQ(warm.discarded, 1u);
}

// The replacement is not connected in the loop iteration that sent the
// request (warm_connections.h says why) but kPreconnectRefillDelay later: a
// nanosecond short of it, the loop runs on and opens nothing.
TEST_F(EnginePreconnectTest, SpareIsOpenedOnlyOnceTheRefillDelayHasPassed) {
  StartReplicas({Always(Answer("a"))});
  StartEngineWithUrls(PreconnectConfig(1), ReplicaUrls(), clock_);
  ASSERT_TRUE(Read("/a").ok());
  clock_.Advance(hedge::kPreconnectRefillDelay - absl::Nanoseconds(1));
  // The loop wakes about once a millisecond while a top-up is pending.
  ASSERT_TRUE(WaitForLoopIterations(3));
  EXPECT_EQ(engine_->Snapshot().warm_connections.opened, 0u);
  EXPECT_EQ(replicas_[0]->open_connections(), 1);

  clock_.Advance(absl::Nanoseconds(1));
  ASSERT_TRUE(WaitForIdleSpares(1));
  EXPECT_EQ(engine_->Snapshot().warm_connections.opened, 1u);
  EXPECT_TRUE(replicas_[0]->WaitForOpenConnections(2, kWait));
}

}  // namespace
}  // namespace tailgate::testing
