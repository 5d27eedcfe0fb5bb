// Engine::ReleaseIdleMemory: the transfer slots a burst left free are
// given back down to a reserve, slots in use are not touched, and the
// engine serves reads as before.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

constexpr int kBurst = 20;
constexpr uint64_t kReserve = 8;  // what ReleaseIdleMemory keeps free

class EngineIdleMemoryTest : public EngineFixture {
 protected:
  void SetUp() override {
    StartReplicas({Always(Answer("slow", absl::Milliseconds(100)))});
    hedge::EngineConfig config = DefaultConfig();
    config.upstreams[0].hedge_delay =
        absl::Milliseconds(900);  // one attempt each
    StartEngine(config);
  }

  // Submits `n` reads at once; they stay in flight for 100 ms.
  std::vector<PendingRead*> SubmitBurst(int n) {
    std::vector<PendingRead*> reads;
    for (int i = 0; i < n; ++i) {
      reads.push_back(&NewPendingRead());
      Submit(Get(absl::StrCat("/burst?i=", i)), *reads.back());
    }
    return reads;
  }

  static void ExpectAllAnswered(const std::vector<PendingRead*>& reads) {
    for (PendingRead* read : reads) {
      const absl::StatusOr<hedge::EngineResponse>& result = read->Wait();
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(result->body, "slow");
    }
  }
};

TEST_F(EngineIdleMemoryTest, GivesBackTheFreeSlotsOfABurstDownToTheReserve) {
  ExpectAllAnswered(SubmitBurst(kBurst));
  ASSERT_EQ(engine_->Snapshot().attempt_slots, static_cast<uint64_t>(kBurst));

  engine_->ReleaseIdleMemory();

  EXPECT_EQ(engine_->Snapshot().attempt_slots, kReserve);
  // The kept slots serve the next reads; a larger burst grows the pool again.
  ExpectAllAnswered(SubmitBurst(kReserve));
  EXPECT_EQ(engine_->Snapshot().attempt_slots, kReserve);
  ExpectAllAnswered(SubmitBurst(kBurst));
  EXPECT_EQ(engine_->Snapshot().attempt_slots, static_cast<uint64_t>(kBurst));
}

TEST_F(EngineIdleMemoryTest, LeavesTheSlotsOfReadsInFlight) {
  const std::vector<PendingRead*> reads = SubmitBurst(kBurst);
  // Every attempt started (their replicas answer after 100 ms).
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (engine_->Snapshot().in_flight_attempts < kBurst &&
         absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_EQ(engine_->Snapshot().in_flight_attempts, kBurst);
  engine_->ReleaseIdleMemory();
  EXPECT_EQ(engine_->Snapshot().attempt_slots, static_cast<uint64_t>(kBurst));
  ExpectAllAnswered(reads);
  EXPECT_EQ(engine_->Snapshot().requests, static_cast<uint64_t>(kBurst));
}

}  // namespace
}  // namespace tailgate::testing
