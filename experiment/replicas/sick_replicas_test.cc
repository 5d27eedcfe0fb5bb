#include "experiment/replicas/sick_replicas.h"

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

using Fault = testing::ReplicaResponse::Fault;

bool Hangs(const testing::ReplicaResponse& response) {
  return response.fault == Fault::kHang;
}

TEST(SickResponseTest, HangNeverAnswers) {
  for (uint64_t id : {0, 1, 2}) {
    EXPECT_TRUE(Hangs(SickResponse(SickKind::kHang, id, false)));
    EXPECT_TRUE(Hangs(SickResponse(SickKind::kHang, id, true)));
  }
}

TEST(SickResponseTest, GrayHangsOnEveryOtherRequest) {
  EXPECT_FALSE(Hangs(SickResponse(SickKind::kGray, 0, false)));
  EXPECT_TRUE(Hangs(SickResponse(SickKind::kGray, 1, false)));
  EXPECT_FALSE(Hangs(SickResponse(SickKind::kGray, 2, false)));
  EXPECT_TRUE(Hangs(SickResponse(SickKind::kGray, 3, false)));
  const testing::ReplicaResponse answered =
      SickResponse(SickKind::kGray, 0, false);
  EXPECT_EQ(answered.status, 200);
  EXPECT_EQ(answered.body, "replicated-value");
  EXPECT_EQ(answered.delay, kHealthyReplicaDelay);
}

TEST(SickResponseTest, SlowAnswersLate) {
  const testing::ReplicaResponse response =
      SickResponse(SickKind::kSlow, 5, false);
  EXPECT_FALSE(Hangs(response));
  EXPECT_EQ(response.delay, absl::Milliseconds(300));
  EXPECT_EQ(response.body, "replicated-value");
}

TEST(SickResponseTest, HealHangsUntilHealed) {
  EXPECT_TRUE(Hangs(SickResponse(SickKind::kHeal, 0, false)));
  const testing::ReplicaResponse healed =
      SickResponse(SickKind::kHeal, 1, true);
  EXPECT_FALSE(Hangs(healed));
  EXPECT_EQ(healed.delay, kHealthyReplicaDelay);
}

TEST(SickReplicaSetTest, TheSickReplicaIsLast) {
  absl::StatusOr<std::unique_ptr<SickReplicaSet>> replicas =
      SickReplicaSet::Start(SickKind::kHang, 3);
  ASSERT_TRUE(replicas.ok()) << replicas.status();
  EXPECT_EQ((*replicas)->size(), 3);
  const std::vector<std::string> urls = (*replicas)->urls();
  ASSERT_EQ(urls.size(), 3u);
  EXPECT_EQ((*replicas)->backends(), urls[0] + "," + urls[1] + "," + urls[2]);
  EXPECT_EQ((*replicas)->RequestsReceived(), (std::vector<int64_t>{0, 0, 0}));
}

}  // namespace
}  // namespace tailgate::experiment
