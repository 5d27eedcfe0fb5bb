#include "hedge/transport/curl/timer_heap.h"

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "gtest/gtest.h"

namespace tailgate::hedge::transport {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);

absl::Time At(int64_t millis) { return kT0 + absl::Milliseconds(millis); }

TEST(TimerHeapTest, EmptyHasNothingDue) {
  TimerHeap heap;
  EXPECT_TRUE(heap.empty());
  EXPECT_EQ(heap.next(), absl::InfiniteFuture());
  EXPECT_EQ(heap.PopDue(absl::InfiniteFuture()), std::nullopt);
}

TEST(TimerHeapTest, PopsInDueOrderAndOnlyWhenDue) {
  TimerHeap heap;
  heap.Arm(At(30), 3);
  heap.Arm(At(10), 1);
  heap.Arm(At(20), 2);
  EXPECT_EQ(heap.next(), At(10));
  EXPECT_EQ(heap.PopDue(At(9)), std::nullopt);
  EXPECT_EQ(heap.PopDue(At(10)), 1u);  // due exactly at `now`
  EXPECT_EQ(heap.PopDue(At(25)), 2u);
  EXPECT_EQ(heap.PopDue(At(25)), std::nullopt);
  EXPECT_EQ(heap.next(), At(30));
  EXPECT_EQ(heap.size(), 1u);
}

TEST(TimerHeapTest, CancelledTimerNeverFires) {
  TimerHeap heap;
  heap.Arm(At(10), 1);
  heap.Arm(At(20), 2);
  EXPECT_TRUE(heap.Cancel(1));
  EXPECT_EQ(heap.next(), At(20));
  EXPECT_EQ(heap.PopDue(At(100)), 2u);
  EXPECT_TRUE(heap.empty());
}

TEST(TimerHeapTest, CancelOfUnknownFiredOrCancelledKeyIsFalse) {
  TimerHeap heap;
  EXPECT_FALSE(heap.Cancel(7));
  heap.Arm(At(1), 7);
  ASSERT_EQ(heap.PopDue(At(1)), 7u);
  EXPECT_FALSE(heap.Cancel(7));  // already fired
  heap.Arm(At(2), 8);
  EXPECT_TRUE(heap.Cancel(8));
  EXPECT_FALSE(heap.Cancel(8));
  EXPECT_TRUE(heap.empty());
}

TEST(TimerHeapTest, RearmMovesTheTimerEitherWay) {
  TimerHeap heap;
  heap.Arm(At(10), 1);
  heap.Arm(At(20), 2);
  heap.Arm(At(30), 1);  // later
  EXPECT_EQ(heap.size(), 2u);
  EXPECT_EQ(heap.PopDue(At(100)), 2u);
  heap.Arm(At(5), 1);  // earlier
  EXPECT_EQ(heap.next(), At(5));
  EXPECT_EQ(heap.PopDue(At(5)), 1u);
  EXPECT_TRUE(heap.empty());
}

// Random arms, re-arms, cancels and pops against a simple ordered model.
TEST(TimerHeapTest, AgreesWithAnOrderedModel) {
  std::mt19937_64 random(42);
  TimerHeap heap;
  std::map<uint64_t, absl::Time> due_by_key;
  std::set<std::pair<absl::Time, uint64_t>> model;
  absl::Time now = kT0;
  for (int step = 0; step < 20000; ++step) {
    const uint64_t key = random() % 64;
    switch (random() % 4) {
      case 0:
      case 1: {
        const absl::Time at = now + absl::Milliseconds(random() % 50);
        auto it = due_by_key.find(key);
        if (it != due_by_key.end()) model.erase({it->second, key});
        due_by_key[key] = at;
        model.insert({at, key});
        heap.Arm(at, key);
        break;
      }
      case 2: {
        auto it = due_by_key.find(key);
        const bool pending = it != due_by_key.end();
        if (pending) {
          model.erase({it->second, key});
          due_by_key.erase(it);
        }
        ASSERT_EQ(heap.Cancel(key), pending) << "step " << step;
        break;
      }
      case 3: {
        now += absl::Milliseconds(random() % 10);
        while (std::optional<uint64_t> fired = heap.PopDue(now)) {
          ASSERT_FALSE(model.empty()) << "step " << step;
          ASSERT_LE(model.begin()->first, now);
          // Equal due times may pop in any order: match by time.
          auto it = due_by_key.find(*fired);
          ASSERT_NE(it, due_by_key.end()) << "step " << step;
          ASSERT_EQ(it->second, model.begin()->first) << "step " << step;
          model.erase({it->second, *fired});
          due_by_key.erase(it);
        }
        if (!model.empty()) {
          ASSERT_GT(model.begin()->first, now);
        }
        break;
      }
    }
    ASSERT_EQ(heap.size(), model.size()) << "step " << step;
    ASSERT_EQ(heap.next(),
              model.empty() ? absl::InfiniteFuture() : model.begin()->first);
  }
}

}  // namespace
}  // namespace tailgate::hedge::transport
