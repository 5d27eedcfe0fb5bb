#include "hedge/replica_picker.h"

#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

absl::Time At(int ms) { return absl::UnixEpoch() + absl::Milliseconds(ms); }

// `n` breakers that open on one failure, for a one-second cooldown.
class Replicas {
 public:
  explicit Replicas(size_t n) {
    for (size_t i = 0; i < n; ++i) {
      owned_.push_back(
          std::make_unique<CircuitBreaker>(CircuitConfig{1, absl::Seconds(1)}));
      raw_.push_back(owned_.back().get());
    }
    picker_ = std::make_unique<ReplicaPicker>(raw_);
  }

  void Open(size_t replica, absl::Time now) {
    CircuitBreaker& breaker = *raw_[replica];
    breaker.OnFailure(*breaker.TryAcquire(now), now);
  }

  ReplicaPicker& picker() { return *picker_; }

 private:
  std::vector<std::unique_ptr<CircuitBreaker>> owned_;
  std::vector<CircuitBreaker*> raw_;
  std::unique_ptr<ReplicaPicker> picker_;
};

std::vector<size_t> PrimaryPicks(ReplicaPicker& picker, int n, absl::Time now) {
  std::vector<size_t> picks;
  for (int i = 0; i < n; ++i) {
    std::optional<ReplicaPick> pick = picker.PickPrimary(now);
    picks.push_back(pick.has_value() ? pick->replica : 99);
  }
  return picks;
}

TEST(ReplicaPickerTest, PrimaryRotatesPerRead) {
  Replicas replicas(3);
  EXPECT_EQ(replicas.picker().size(), 3u);
  EXPECT_EQ(PrimaryPicks(replicas.picker(), 7, At(0)),
            (std::vector<size_t>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(ReplicaPickerTest, PrimarySkipsOpenCircuits) {
  Replicas replicas(3);
  replicas.Open(1, At(0));
  // Starts 0, 1, 2, 0: the read that would have started at 1 moves on to 2.
  EXPECT_EQ(PrimaryPicks(replicas.picker(), 4, At(0)),
            (std::vector<size_t>{0, 2, 2, 0}));
}

TEST(ReplicaPickerTest, RetiredReplicaIsNeverPickedAgain) {
  Replicas replicas(3);
  replicas.picker().Retire(1);
  EXPECT_EQ(PrimaryPicks(replicas.picker(), 4, At(0)),
            (std::vector<size_t>{0, 2, 2, 0}));
  std::optional<ReplicaPick> alternate = replicas.picker().PickAlternate(0, At(0));
  ASSERT_TRUE(alternate.has_value());
  EXPECT_EQ(alternate->replica, 2u);
  replicas.picker().Retire(2);
  EXPECT_FALSE(replicas.picker().HasAlternate(0, At(0)));
  EXPECT_FALSE(replicas.picker().PickAlternate(0, At(0)).has_value());
  replicas.picker().Retire(0);
  EXPECT_FALSE(replicas.picker().PickPrimary(At(0)).has_value());
}

TEST(ReplicaPickerTest, PrimaryCarriesTheGrantedTicket) {
  Replicas replicas(2);
  replicas.Open(0, At(0));
  std::optional<ReplicaPick> pick = replicas.picker().PickPrimary(At(1000));
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->replica, 0u);
  EXPECT_TRUE(pick->ticket.probe);
  EXPECT_EQ(pick->ticket.generation, 2u);
  // The probe is out: the next read that starts at 0 goes to 1.
  EXPECT_EQ(PrimaryPicks(replicas.picker(), 2, At(1000)),
            (std::vector<size_t>{1, 1}));
}

TEST(ReplicaPickerTest, AllCircuitsOpenGivesNoPick) {
  Replicas replicas(3);
  for (size_t i = 0; i < 3; ++i) replicas.Open(i, At(0));
  EXPECT_FALSE(replicas.picker().PickPrimary(At(10)).has_value());
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(replicas.picker().HasAlternate(i, At(10)));
    EXPECT_FALSE(replicas.picker().PickAlternate(i, At(10)).has_value());
  }
  EXPECT_TRUE(replicas.picker().PickPrimary(At(1000)).has_value());
}

TEST(ReplicaPickerTest, SingleReplicaHasNoAlternate) {
  Replicas replicas(1);
  EXPECT_EQ(replicas.picker().PickPrimary(At(0))->replica, 0u);
  EXPECT_FALSE(replicas.picker().HasAlternate(0, At(0)));
  EXPECT_FALSE(replicas.picker().PickAlternate(0, At(0)).has_value());
}

TEST(ReplicaPickerTest, AlternateScanStartsAfterTheExcludedReplica) {
  Replicas replicas(4);
  EXPECT_EQ(replicas.picker().PickAlternate(1, At(0))->replica, 2u);
  EXPECT_EQ(replicas.picker().PickAlternate(3, At(0))->replica, 0u);
  // The alternate scan does not move the primary rotation.
  EXPECT_EQ(replicas.picker().PickPrimary(At(0))->replica, 0u);
}

// Every size 2..5, every excluded replica, every set of open circuits.
TEST(ReplicaPickerTest, AlternateIsNeverTheExcludedReplica) {
  for (size_t n = 2; n <= 5; ++n) {
    for (size_t exclude = 0; exclude < n; ++exclude) {
      for (unsigned open = 0; open < (1u << n); ++open) {
        Replicas replicas(n);
        for (size_t i = 0; i < n; ++i) {
          if (open & (1u << i)) replicas.Open(i, At(0));
        }
        std::optional<size_t> want;
        for (size_t step = 1; step < n && !want.has_value(); ++step) {
          const size_t i = (exclude + step) % n;
          if (!(open & (1u << i))) want = i;
        }
        SCOPED_TRACE(::testing::Message() << "n=" << n << " exclude=" << exclude
                                          << " open=" << open);
        EXPECT_EQ(replicas.picker().HasAlternate(exclude, At(1)),
                  want.has_value());
        std::optional<ReplicaPick> pick =
            replicas.picker().PickAlternate(exclude, At(1));
        ASSERT_EQ(pick.has_value(), want.has_value());
        if (pick.has_value()) {
          EXPECT_NE(pick->replica, exclude);
          EXPECT_EQ(pick->replica, *want);
        }
      }
    }
  }
}

TEST(ReplicaPickerTest, HasAlternateTakesNoTicket) {
  Replicas replicas(2);
  replicas.Open(1, At(0));
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(replicas.picker().HasAlternate(0, At(1000)));
  std::optional<ReplicaPick> probe =
      replicas.picker().PickAlternate(0, At(1000));
  ASSERT_TRUE(probe.has_value());
  EXPECT_TRUE(probe->ticket.probe);
  EXPECT_FALSE(replicas.picker().HasAlternate(0, At(1000)));
  EXPECT_FALSE(replicas.picker().PickAlternate(0, At(1000)).has_value());
}

TEST(ReplicaPickerTest, ConcurrentReadsShareTheRotationEvenly) {
  constexpr int kThreads = 4;
  constexpr int kPicksPerThread = 3000;
  Replicas replicas(3);
  std::vector<std::vector<int>> counts(kThreads, std::vector<int>(3));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&replicas, &counts, t] {
      for (int i = 0; i < kPicksPerThread; ++i) {
        ++counts[t][replicas.picker().PickPrimary(At(0))->replica];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t replica = 0; replica < 3; ++replica) {
    int total = 0;
    for (int t = 0; t < kThreads; ++t) total += counts[t][replica];
    EXPECT_EQ(total, kThreads * kPicksPerThread / 3) << replica;
  }
}

}  // namespace
}  // namespace tailgate::hedge
