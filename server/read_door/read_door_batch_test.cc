// ReadMany at the read door, in-process (read_door_fixture.h): items in
// completion order, a bad read failing only its item, the batch limit,
// max_in_flight, and cancelling the call.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/read_door/read_door_fixture.h"

namespace tailgate::server::read_door {
namespace {

using ::tailgate::server::testing::DoorHarness;
using ::tailgate::server::testing::FakeLoopEngine;

// A ReadMany call run on a thread of its own: its items as they come, then
// its status.
class AsyncReadMany {
 public:
  AsyncReadMany(v1::HedgedRead::Stub& stub,
                const std::vector<std::string>& paths,
                uint32_t max_in_flight = 0) {
    for (const std::string& path : paths) request_.add_reads()->set_path(path);
    request_.set_max_in_flight(max_in_flight);
    context_.set_deadline(std::chrono::system_clock::now() +
                          std::chrono::seconds(30));
    thread_ = std::thread([this, &stub] {
      std::unique_ptr<grpc::ClientReader<v1::ReadManyItem>> reader =
          stub.ReadMany(&context_, request_);
      v1::ReadManyItem item;
      while (reader->Read(&item)) {
        absl::MutexLock lock(&mu_);
        items_.push_back(item);
      }
      status_ = reader->Finish();
      done_.Notify();
    });
  }
  ~AsyncReadMany() {
    context_.TryCancel();
    thread_.join();
  }

  void Cancel() { context_.TryCancel(); }
  // The call's status, once it has ended within kWait.
  grpc::Status Wait() {
    EXPECT_TRUE(done_.WaitForNotificationWithTimeout(kWait));
    return status_;
  }
  std::vector<v1::ReadManyItem> items() {
    absl::MutexLock lock(&mu_);
    return items_;
  }

 private:
  v1::ReadManyRequest request_;
  grpc::ClientContext context_;
  std::thread thread_;
  absl::Mutex mu_;
  std::vector<v1::ReadManyItem> items_ ABSL_GUARDED_BY(mu_);
  grpc::Status status_;
  absl::Notification done_;
};

TEST_F(ReadDoorTest, ReadManyStreamsItemsInCompletionOrder) {
  Start();
  AsyncReadMany call(*stub_, {"/a", "/b", "/c"});
  const FakeLoopEngine::Submitted a = Read(0), b = Read(1), c = Read(2);
  EXPECT_EQ(a.read.target, "/a");
  EXPECT_EQ(c.read.target, "/c");
  ASSERT_TRUE(engine_->Answer(c.id, DoorHarness::Response(200, "C")));
  ASSERT_TRUE(engine_->Answer(a.id, DoorHarness::Response(200, "A")));
  ASSERT_TRUE(engine_->Answer(b.id, DoorHarness::Response(404, "B")));
  const grpc::Status status = call.Wait();
  EXPECT_TRUE(status.ok()) << status.error_message();
  const std::vector<v1::ReadManyItem> items = call.items();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].index(), 2u);
  EXPECT_EQ(items[0].response().body(), "C");
  EXPECT_EQ(items[1].index(), 0u);
  EXPECT_EQ(items[1].response().body(), "A");
  EXPECT_EQ(items[2].index(), 1u);
  EXPECT_EQ(items[2].response().status(), 404);
  for (const v1::ReadManyItem& item : items) EXPECT_EQ(item.code(), 0);
  EXPECT_TRUE(WaitForNoCalls());
  EXPECT_EQ(memory_->held_bytes(), 0);
}

TEST_F(ReadDoorTest, ReadManyFailsABadReadsItemOnly) {
  Start();
  AsyncReadMany call(*stub_, {"/ok", "no-slash"});
  const FakeLoopEngine::Submitted ok = Read(0);
  ASSERT_TRUE(engine_->Answer(ok.id, DoorHarness::Response(200, "fine")));
  EXPECT_TRUE(call.Wait().ok());
  const std::vector<v1::ReadManyItem> items = call.items();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].index(), 1u);
  EXPECT_EQ(items[0].code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_FALSE(items[0].has_response());
  EXPECT_FALSE(items[0].message().empty());
  EXPECT_EQ(items[1].response().body(), "fine");
  EXPECT_EQ(engine_->submitted().size(), 1u);
}

TEST_F(ReadDoorTest, ReadManyOverTheBatchLimitIsRefusedNamingIt) {
  ReadDoorOptions options;
  options.max_batch_reads = 3;
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  AsyncReadMany at_limit(*stub_, {"/1", "/2", "/3"});
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(engine_->Answer(Read(i).id, DoorHarness::Response(200, "x")));
  }
  EXPECT_TRUE(at_limit.Wait().ok());
  AsyncReadMany over(*stub_, {"/1", "/2", "/3", "/4"});
  const grpc::Status status = over.Wait();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "--max_batch_reads"))
      << status.error_message();
  EXPECT_TRUE(over.items().empty());
  EXPECT_EQ(engine_->submitted().size(), 3u);
}

TEST_F(ReadDoorTest, ReadManyRunsAtMostMaxInFlightReadsAtOnce) {
  Start();
  AsyncReadMany call(*stub_, {"/1", "/2", "/3", "/4"}, /*max_in_flight=*/2);
  const FakeLoopEngine::Submitted first = Read(0);
  Read(1);
  EXPECT_EQ(engine_->submitted().size(), 2u);
  ASSERT_TRUE(engine_->Answer(first.id, DoorHarness::Response(200, "1")));
  EXPECT_EQ(Read(2).read.target, "/3");  // once the first item was sent
  EXPECT_EQ(engine_->pending(), 2u);
}

TEST_F(ReadDoorTest, CancellingAReadManyCancelsItsReadsInFlight) {
  Start();
  AsyncReadMany call(*stub_, {"/1", "/2", "/3", "/4", "/5"});
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < 5; ++i) ids.push_back(Read(i).id);
  ASSERT_TRUE(engine_->Answer(ids[0], DoorHarness::Response(200, "1")));
  call.Cancel();
  EXPECT_EQ(call.Wait().error_code(), grpc::StatusCode::CANCELLED);
  for (size_t i = 1; i < 5; ++i) {
    EXPECT_TRUE(engine_->WaitForCancelled(ids[i], kWait)) << i;
  }
  EXPECT_TRUE(WaitForNoCalls());
  EXPECT_EQ(memory_->held_bytes(), 0);
  EXPECT_EQ(gate_.in_flight(), 0);
}

// The door stopping with a batch running cancels its reads, sends their
// items (UNAVAILABLE: shutting down) and ends the call before it is gone.
TEST_F(ReadDoorTest, StoppingWithAReadManyRunningCancelsItsReads) {
  Start();
  AsyncReadMany call(*stub_, {"/1", "/2"});
  const uint64_t first = Read(0).id, second = Read(1).id;
  door_.reset();
  EXPECT_TRUE(engine_->WaitForCancelled(first, kWait));
  EXPECT_TRUE(engine_->WaitForCancelled(second, kWait));
  EXPECT_TRUE(call.Wait().ok());
  const std::vector<v1::ReadManyItem> items = call.items();
  ASSERT_EQ(items.size(), 2u);
  for (const v1::ReadManyItem& item : items) {
    EXPECT_EQ(item.code(), grpc::StatusCode::UNAVAILABLE);
  }
  EXPECT_EQ(gate_.in_flight(), 0);
}

}  // namespace
}  // namespace tailgate::server::read_door
