// Connections idle in curl's cache, between reads: sequential reads share
// one, the loop sleeps while they idle, a replica that closes an idle
// connection does not make the loop spin on the closed socket (and the
// next read connects again), and a read cancelled on a kept connection
// takes that connection with it.

#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

constexpr absl::Duration kWait = absl::Seconds(5);

class EngineIdleConnectionTest : public EngineFixture {
 protected:
  void SetUp() override {
    StartReplicas({Always(Answer("kept"))});
    hedge::EngineConfig config = DefaultConfig();
    config.upstreams[0].hedge_delay = absl::Milliseconds(900);  // one attempt each
    config.upstreams[0].preconnect = 0;  // only curl's own connections
    StartEngine(config);
  }

  void ExpectRead(const std::string& target) {
    const absl::StatusOr<hedge::EngineResponse> result = Read(target);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->body, "kept");
  }

  // Loop iterations over `window`, after `settle` for what is under way.
  uint64_t IterationsOver(absl::Duration window,
                          absl::Duration settle = absl::Milliseconds(50)) {
    absl::SleepFor(settle);
    const uint64_t before = engine_->Snapshot().loop_iterations;
    absl::SleepFor(window);
    return engine_->Snapshot().loop_iterations - before;
  }
};

TEST_F(EngineIdleConnectionTest, SequentialReadsShareOneConnection) {
  for (int i = 0; i < 20; ++i) ExpectRead("/seq");
  EXPECT_EQ(replicas_[0]->connections_accepted(), 1);
  // Idle, the loop sleeps: the kept connection does not wake it.
  EXPECT_LT(IterationsOver(absl::Milliseconds(200)), 10u);
}

TEST_F(EngineIdleConnectionTest, AReplicaClosingTheIdleConnectionIsNoSpin) {
  ExpectRead("/first");
  const int port = replicas_[0]->port();
  // Closes every connection, the engine's idle one among them.
  replicas_[0].reset();
  // Level-triggered, a closed socket still watched would wake the loop
  // without end: thousands of iterations in this window.
  EXPECT_LT(IterationsOver(absl::Milliseconds(200)), 10u);

  ReplicaOptions options;
  options.port = port;
  absl::StatusOr<std::unique_ptr<Replica>> again =
      Replica::Start(Always(Answer("kept")), options);
  ASSERT_TRUE(again.ok()) << again.status();
  replicas_[0] = *std::move(again);
  ExpectRead("/after-close");
  EXPECT_EQ(replicas_[0]->connections_accepted(), 1);  // a new connection
}

TEST_F(EngineIdleConnectionTest, ACancelledReadClosesItsKeptConnection) {
  // The connection is kept, then carries a read that is cancelled: curl
  // closes it, and the next read connects again.
  replicas_[0]->SetHandler(
      Route({{"/hang", Always(Hang())}, {"/", Always(Answer("kept"))}}));
  ExpectRead("/warm");
  PendingRead& pending = NewPendingRead();
  const uint64_t id = Submit(Get("/hang"), pending);
  ASSERT_TRUE(replicas_[0]->WaitForRequests(2, kWait));
  engine_->Cancel(id);
  EXPECT_EQ(pending.Wait().status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(replicas_[0]->WaitForOpenConnections(0, kWait));

  ExpectRead("/next");
  EXPECT_EQ(replicas_[0]->connections_accepted(), 2);
  EXPECT_LT(IterationsOver(absl::Milliseconds(200)), 10u);
}

}  // namespace
}  // namespace tailgate::testing
