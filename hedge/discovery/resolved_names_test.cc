#include "hedge/discovery/resolved_names.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fake_clock.h"

namespace tailgate::hedge::discovery {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Addresses = std::vector<std::string>;

constexpr absl::Duration kInterval = absl::Seconds(5);

TEST(ResolvedNamesTest, NewNameIsDueAtOnceThenEveryInterval) {
  testing::FakeClock clock;
  ResolvedNames names;
  names.Track({"a.test"}, kInterval, clock.Now());
  EXPECT_THAT(names.Due(clock.Now()), ElementsAre("a.test"));
  EXPECT_TRUE(names.Record("a.test", Addresses{"10.0.0.1"}, clock.Now()));
  EXPECT_THAT(names.Due(clock.Now()), IsEmpty());
  EXPECT_EQ(names.NextDue(), clock.Now() + kInterval);
  clock.Advance(kInterval - absl::Milliseconds(1));
  EXPECT_THAT(names.Due(clock.Now()), IsEmpty());
  clock.Advance(absl::Milliseconds(1));
  EXPECT_THAT(names.Due(clock.Now()), ElementsAre("a.test"));
}

TEST(ResolvedNamesTest, SameAnswerInAnyOrderIsNoChange) {
  testing::FakeClock clock;
  ResolvedNames names;
  names.Track({"a.test"}, kInterval, clock.Now());
  EXPECT_TRUE(names.Record("a.test", Addresses{"10.0.0.2", "10.0.0.1"},
                           clock.Now()));
  EXPECT_FALSE(names.Record("a.test", Addresses{"10.0.0.1", "10.0.0.2"},
                            clock.Now()));
  EXPECT_THAT(names.Addresses("a.test"), ElementsAre("10.0.0.1", "10.0.0.2"));
  // One address leaves, one joins.
  EXPECT_TRUE(names.Record("a.test", Addresses{"10.0.0.2", "10.0.0.3"},
                           clock.Now()));
  EXPECT_THAT(names.Addresses("a.test"), ElementsAre("10.0.0.2", "10.0.0.3"));
  EXPECT_EQ(names.failures(), 0u);
}

TEST(ResolvedNamesTest, FailedOrEmptyAnswerKeepsLastGoodSetAndCounts) {
  testing::FakeClock clock;
  ResolvedNames names;
  names.Track({"a.test"}, kInterval, clock.Now());
  ASSERT_TRUE(names.Record("a.test", Addresses{"10.0.0.1"}, clock.Now()));
  clock.Advance(kInterval);
  EXPECT_FALSE(names.Record("a.test", absl::UnavailableError("timed out"),
                            clock.Now()));
  EXPECT_FALSE(names.Record("a.test", Addresses{}, clock.Now()));
  EXPECT_FALSE(names.Record("a.test", absl::NotFoundError("no address"),
                            clock.Now()));
  EXPECT_EQ(names.failures(), 3u);
  EXPECT_THAT(names.Addresses("a.test"), ElementsAre("10.0.0.1"));
  // A failure is retried at the next interval, not at once.
  EXPECT_THAT(names.Due(clock.Now()), IsEmpty());
  EXPECT_EQ(names.NextDue(), clock.Now() + kInterval);
}

TEST(ResolvedNamesTest, NameNeverResolvedHasNoAddressAndNoReplica) {
  testing::FakeClock clock;
  ResolvedNames names;
  names.Track({"a.test"}, kInterval, clock.Now());
  EXPECT_FALSE(names.Record("a.test", absl::NotFoundError("none"),
                            clock.Now()));
  EXPECT_THAT(names.Addresses("a.test"), IsEmpty());
  absl::StatusOr<std::vector<hygiene::ReplicaUrl>> replicas =
      hygiene::ParseReplicaList("dns://a.test:8080, http://127.0.0.1:81");
  ASSERT_TRUE(replicas.ok()) << replicas.status();
  const std::vector<hygiene::ReplicaUrl> expanded =
      ExpandReplicas(*replicas, names);
  ASSERT_EQ(expanded.size(), 1u);
  EXPECT_EQ(expanded[0].configured, "http://127.0.0.1:81");
}

TEST(ResolvedNamesTest, ExpandsEachResolvedReplicaToOnePerAddress) {
  testing::FakeClock clock;
  ResolvedNames names;
  absl::StatusOr<std::vector<hygiene::ReplicaUrl>> replicas =
      hygiene::ParseReplicaList("http://127.0.0.1:81, dns://shard.test:8080/v1");
  ASSERT_TRUE(replicas.ok()) << replicas.status();
  EXPECT_THAT(ResolvedHosts(*replicas), ElementsAre("shard.test"));
  names.Track(ResolvedHosts(*replicas), kInterval, clock.Now());
  names.Record("shard.test", Addresses{"127.0.0.3", "127.0.0.2"}, clock.Now());
  const std::vector<hygiene::ReplicaUrl> expanded =
      ExpandReplicas(*replicas, names);
  ASSERT_EQ(expanded.size(), 3u);
  EXPECT_EQ(hygiene::ReplicaLabel(expanded[0]), "http://127.0.0.1:81");
  EXPECT_EQ(hygiene::ReplicaLabel(expanded[1]), "shard.test@127.0.0.2");
  EXPECT_EQ(hygiene::ReplicaLabel(expanded[2]), "shard.test@127.0.0.3");
  EXPECT_EQ(hygiene::BuildAttemptUrl(expanded[2], "/x"),
            "http://shard.test:8080/v1/x");  // Host stays the name
}

TEST(ResolvedNamesTest, TrackKeepsKnownNamesAndForgetsDroppedOnes) {
  testing::FakeClock clock;
  ResolvedNames names;
  names.Track({"a.test", "b.test"}, kInterval, clock.Now());
  names.Record("a.test", Addresses{"10.0.0.1"}, clock.Now());
  names.Record("b.test", Addresses{"10.0.0.2"}, clock.Now());
  clock.Advance(absl::Seconds(1));
  names.Track({"a.test", "c.test"}, kInterval, clock.Now());
  EXPECT_THAT(names.Addresses("a.test"), ElementsAre("10.0.0.1"));
  EXPECT_THAT(names.Addresses("b.test"), IsEmpty());
  EXPECT_THAT(names.Due(clock.Now()), ElementsAre("c.test"));
  // A shorter interval brings the known name's next lookup closer.
  names.Track({"a.test"}, absl::Seconds(1), clock.Now());
  EXPECT_EQ(names.NextDue(), clock.Now() + absl::Seconds(1));
  EXPECT_FALSE(names.Record("b.test", Addresses{"10.0.0.9"}, clock.Now()));
}

}  // namespace
}  // namespace tailgate::hedge::discovery
