// HedgedRead.ReadMany through the real binary on --listen (the loop
// front), against real loopback replicas: a 100-key batch, reads that fail
// only their items, the batch limit, and a cancelled batch.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {
namespace {

// The replica answers each path with itself as the body.
Handler EchoPath(absl::Duration delay = {}) {
  return [delay](const ReplicaRequest& request) {
    return Body(request.uri, delay);
  };
}

v1::ReadManyRequest Batch(int reads) {
  v1::ReadManyRequest request;
  for (int i = 0; i < reads; ++i) {
    request.add_reads()->set_path(absl::StrCat("/key/", i));
  }
  return request;
}

class ReadManyE2eTest : public TailgateE2eTest {
 protected:
  // Runs `request` to its end: its items, and the call's status.
  grpc::Status ReadMany(const v1::ReadManyRequest& request,
                        std::vector<v1::ReadManyItem>* items) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
    std::unique_ptr<grpc::ClientReader<v1::ReadManyItem>> reader =
        reads_->ReadMany(&context, request);
    v1::ReadManyItem item;
    while (reader->Read(&item)) items->push_back(item);
    return reader->Finish();
  }
};

TEST_F(ReadManyE2eTest, AHundredKeyBatchAnswersEachKeyOnceWithItsOwnBody) {
  AddReplica(EchoPath());
  AddReplica(EchoPath());
  StartTailgate();
  std::vector<v1::ReadManyItem> items;
  const grpc::Status status = ReadMany(Batch(100), &items);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(items.size(), 100u);
  std::set<uint32_t> seen;
  for (const v1::ReadManyItem& item : items) {
    EXPECT_TRUE(seen.insert(item.index()).second) << item.index();
    EXPECT_EQ(item.code(), 0);
    EXPECT_EQ(item.response().status(), 200);
    EXPECT_EQ(item.response().body(), absl::StrCat("/key/", item.index()));
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(Stats().requests(), 100u);
}

TEST_F(ReadManyE2eTest, ABadPathAndAnUnknownUpstreamFailOnlyTheirItems) {
  AddReplica(EchoPath());
  StartTailgate();
  v1::ReadManyRequest request = Batch(4);
  request.mutable_reads(1)->set_path("no-slash");
  request.mutable_reads(2)->set_upstream("nope");
  std::vector<v1::ReadManyItem> items;
  ASSERT_TRUE(ReadMany(request, &items).ok());
  ASSERT_EQ(items.size(), 4u);
  for (const v1::ReadManyItem& item : items) {
    switch (item.index()) {
      case 1:
        EXPECT_EQ(item.code(), grpc::StatusCode::INVALID_ARGUMENT);
        EXPECT_FALSE(item.has_response());
        break;
      case 2:
        EXPECT_EQ(item.code(), grpc::StatusCode::NOT_FOUND);
        EXPECT_TRUE(absl::StrContains(item.message(), "nope"))
            << item.message();
        break;
      default:
        EXPECT_EQ(item.code(), 0);
        EXPECT_EQ(item.response().body(), absl::StrCat("/key/", item.index()));
    }
  }
}

TEST_F(ReadManyE2eTest, ABatchOverMaxBatchReadsIsRefusedNamingTheLimit) {
  AddReplica(EchoPath());
  StartTailgate();
  std::vector<v1::ReadManyItem> items;
  const grpc::Status status = ReadMany(Batch(1001), &items);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "1000"))
      << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "--max_batch_reads"))
      << status.error_message();
  EXPECT_TRUE(items.empty());
  items.clear();
  EXPECT_TRUE(ReadMany(Batch(1000), &items).ok());
  EXPECT_EQ(items.size(), 1000u);
}

// Cancelling a batch of 50 reads on a replica that takes 5 s cancels each:
// in_flight is back to 0 within a second, and every read counts as
// cancelled.
TEST_F(ReadManyE2eTest, CancellingABatchCancelsEachOfItsReads) {
  AddReplica(EchoPath(absl::Seconds(5)));
  StartTailgate({"--hedge_fraction=0"});
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
  std::unique_ptr<grpc::ClientReader<v1::ReadManyItem>> reader =
      reads_->ReadMany(&context, Batch(50));
  const absl::Time until = absl::Now() + kWait;
  while (Stats().in_flight() < 50 && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(Stats().in_flight(), 50);
  context.TryCancel();
  const absl::Time cancelled_at = absl::Now();
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  while (Stats().in_flight() > 0 && absl::Now() < cancelled_at + kWait) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_LT(absl::Now() - cancelled_at, absl::Seconds(1));
  EXPECT_EQ(Stats().in_flight(), 0);
  EXPECT_EQ(Stats().cancelled(), 50u);
}

}  // namespace
}  // namespace tailgate::testing
