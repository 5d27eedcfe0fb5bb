// Overload answers (429, 503) are failed attempts: through real loopback
// replicas, with the engine's default policy, a replica that refuses every
// request at once with 429 and Retry-After draws almost no read, the reads
// it does get fall back to a replica that answers, and a read that only
// overload answers can serve gets the last of them as it is: status,
// Retry-After and body.

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/fake_clock.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

constexpr absl::Duration kTimeout = absl::Seconds(2);
constexpr absl::Duration kPace = absl::Milliseconds(5);

// The engine's defaults, but for a longer timeout: nothing here may pass
// by reaching it.
hedge::EngineConfig Defaults() {
  hedge::EngineConfig config;
  config.upstreams.resize(1);
  config.timeout = kTimeout;
  return config;
}

ReplicaResponse Refusal(int status = 429) {
  ReplicaResponse response;
  response.status = status;
  response.headers = {{"Retry-After", "5"}};
  response.body = "slow down";
  return response;
}

std::string HeaderValue(const hedge::EngineResponse& response,
                        absl::string_view name) {
  for (const auto& header : response.headers) {
    if (absl::EqualsIgnoreCase(header.name, name)) return header.value;
  }
  return "";
}

class EngineOverloadAnswerTest : public EngineFixture {
 protected:
  struct Tally {
    int ok = 0;
    int refused = 0;  // overload answers returned to the caller
    int other = 0;
  };

  Tally ReadSteadily(int reads, int first_id) {
    Tally tally;
    for (int i = 0; i < reads; ++i) {
      absl::StatusOr<hedge::EngineResponse> response =
          Read(absl::StrCat("/read?id=", first_id + i));
      if (response.ok() && response->status == 200 &&
          response->body == "value") {
        ++tally.ok;
      } else if (response.ok() && (response->status == 429 ||
                                   response->status == 503)) {
        ++tally.refused;
      } else {
        ++tally.other;
        ADD_FAILURE() << "read " << i << ": "
                      << (response.ok() ? absl::StrCat(response->status)
                                        : response.status().ToString());
      }
      absl::SleepFor(kPace);  // pacing the reader, not waiting for a result
    }
    return tally;
  }

  // Replica 0 answers, replica 1 refuses every request with `status`:
  // after a few reads, at most 2 % are refused and reads take at most
  // 1.10 attempts on average.
  void ExpectAvoided(int status) {
    StartReplicas({Always(Answer("value")), Always(Refusal(status))});
    StartEngine(Defaults());
    // The first reads find the refusing replica out, and fall back.
    constexpr int kWarmUp = 10;
    const Tally warm_up = ReadSteadily(kWarmUp, 0);
    EXPECT_EQ(warm_up.other, 0);
    EXPECT_LE(warm_up.refused, 1);
    constexpr int kReads = 50;
    const int64_t before = TotalRequests();
    const Tally tally = ReadSteadily(kReads, kWarmUp);
    const int64_t attempts = TotalRequests() - before;
    EXPECT_EQ(tally.other, 0);
    EXPECT_LE(tally.refused, 1);  // at most 2 %
    EXPECT_LE(attempts, kReads * 110 / 100) << "attempts " << attempts;
    const hedge::EngineSnapshot snapshot = engine_->Snapshot();
    // It got few primaries, and they fell back to the replica that
    // answers.
    EXPECT_LE(snapshot.replicas[1].attempts_primary, 6u);
    EXPECT_GE(snapshot.replicas[0].attempts_fallback + 1,
              snapshot.replicas[1].attempts_primary);
  }
};

TEST_F(EngineOverloadAnswerTest, TooManyRequestsReplicaIsAvoided) {
  ExpectAvoided(429);
}

TEST_F(EngineOverloadAnswerTest, UnavailableReplicaIsAvoided) {
  ExpectAvoided(503);
}

TEST_F(EngineOverloadAnswerTest, OnlyOverloadAnswersReachTheCallerAsTheyAre) {
  StartReplicas({Always(Refusal())});
  StartEngine(Defaults());
  absl::StatusOr<hedge::EngineResponse> response = Read("/alone");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 429);
  EXPECT_EQ(HeaderValue(*response, "Retry-After"), "5");
  EXPECT_EQ(response->body, "slow down");
  EXPECT_EQ(response->trace.attempts, 1);
  EXPECT_FALSE(response->trace.hedge_won);
}

TEST_F(EngineOverloadAnswerTest, EveryAttemptRefusedGivesTheLastRefusal) {
  StartReplicas({Always(Refusal()), Always(Refusal())});
  StartEngine(Defaults());
  absl::StatusOr<hedge::EngineResponse> response = Read("/both");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 429);
  EXPECT_EQ(HeaderValue(*response, "Retry-After"), "5");
  EXPECT_EQ(response->body, "slow down");
  // The primary's refusal fell back to the other replica, which refused
  // too: the fallback's answer is the one returned.
  EXPECT_EQ(response->trace.attempts, 2);
  EXPECT_FALSE(response->trace.hedge_won);
  EXPECT_EQ(TotalRequests(), 2);
  // Both asked for 5 s: the next reads still go out, one attempt each.
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<hedge::EngineResponse> next =
        Read(absl::StrCat("/next?id=", i));
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ(next->status, 429);
    EXPECT_EQ(next->trace.attempts, 1);
  }
  EXPECT_EQ(TotalRequests(), 5);
}

TEST_F(EngineOverloadAnswerTest, RetryAfterKeepsTheReplicaOutForItsTime) {
  // Replica 1 asks for 5 s; 100 reads take far less than that.
  StartReplicas({Always(Answer("value")), Always(Refusal())});
  StartEngine(Defaults());
  const Tally tally = ReadSteadily(100, 0);
  EXPECT_EQ(tally.ok, 100);
  // At most the one request that was refused (the first read may not have
  // gone to it at all).
  EXPECT_LE(replicas_[1]->requests().size(), 1u);
}

// The back-off changes the engine reports, in order.
class BackOffRecorder final : public hedge::EngineObserver {
 public:
  struct Change {
    std::string replica;
    hedge::BackOffChange change;
  };
  void OnCircuitTransition(const std::string&, const std::string&,
                           const hedge::CircuitTransition&) override {}
  void OnReplicaBackOff(const std::string& /*upstream*/,
                        const std::string& replica,
                        const hedge::BackOffChange& change) override {
    std::lock_guard<std::mutex> lock(mu_);
    changes_.push_back({replica, change});
  }
  std::vector<Change> changes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return changes_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Change> changes_;
};

class EngineBackOffTest : public EngineOverloadAnswerTest {
 protected:
  // Both outlive the engine, which TearDown destroys.
  FakeClock clock_;
  BackOffRecorder recorder_;
};

// On a fake clock: the snapshot shows the back-off and what is left of it,
// and the observer hears it begin once and end once.
TEST_F(EngineBackOffTest, BackOffIsInTheSnapshotAndToldAsItBeginsAndEnds) {
  FakeClock& clock = clock_;
  BackOffRecorder& recorder = recorder_;
  StartReplicas({Always(Answer("value")), Always(Refusal(503))});
  StartEngineWithUrls(Defaults(), ReplicaUrls(), clock, &recorder);
  // Reads until replica 1 has refused one (then it takes no primary).
  for (int i = 0; i < 20; ++i) {
    if (engine_->Snapshot().replicas[1].overload_answers_503 > 0) break;
    // A refusal falls back to replica 0.
    absl::StatusOr<hedge::EngineResponse> response =
        Read(absl::StrCat("/r?id=", i));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "value");
  }
  hedge::EngineSnapshot snapshot = engine_->Snapshot();
  const hedge::ReplicaSnapshot& refusing = snapshot.replicas[1];
  EXPECT_EQ(refusing.overload_answers_503, 1u);
  EXPECT_EQ(refusing.overload_answers_429, 0u);
  EXPECT_TRUE(refusing.backed_off);
  EXPECT_EQ(refusing.back_off_remaining, absl::Seconds(5));
  EXPECT_FALSE(snapshot.replicas[0].backed_off);
  EXPECT_EQ(snapshot.replicas[0].back_off_remaining, absl::ZeroDuration());
  EXPECT_EQ(snapshot.replicas[0].overload_answers_503, 0u);
  const std::string url = refusing.url;
  std::vector<BackOffRecorder::Change> changes = recorder.changes();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].replica, url);
  EXPECT_TRUE(changes[0].change.backed_off);
  EXPECT_EQ(changes[0].change.status, 503);
  EXPECT_EQ(changes[0].change.retry_after, absl::Seconds(5));

  clock.Advance(absl::Seconds(2));
  snapshot = engine_->Snapshot();
  EXPECT_TRUE(snapshot.replicas[1].backed_off);
  EXPECT_EQ(snapshot.replicas[1].back_off_remaining, absl::Seconds(3));
  clock.Advance(absl::Seconds(3));
  snapshot = engine_->Snapshot();
  EXPECT_FALSE(snapshot.replicas[1].backed_off);
  EXPECT_EQ(snapshot.replicas[1].back_off_remaining, absl::ZeroDuration());

  // The end is told when the loop next looks at its timers (a read wakes
  // it; the fake clock does not).
  const absl::Time give_up = absl::Now() + absl::Seconds(5);
  for (int i = 0; recorder.changes().size() < 2 && absl::Now() < give_up; ++i) {
    ASSERT_TRUE(Read(absl::StrCat("/after?id=", i)).ok());
    absl::SleepFor(absl::Milliseconds(1));  // polling a condition
  }
  changes = recorder.changes();
  ASSERT_GE(changes.size(), 2u);
  EXPECT_EQ(changes[1].replica, url);
  EXPECT_FALSE(changes[1].change.backed_off);
  EXPECT_EQ(changes[1].change.lasted, absl::Seconds(5));
}

}  // namespace
}  // namespace tailgate::testing
