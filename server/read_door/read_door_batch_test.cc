// ReadMany at the read door, in-process (read_door_fixture.h): items in
// completion order, a bad read failing only its item, the batch limit,
// max_in_flight, and cancelling the call; a batch inside its connection's
// limits (its reads in the connection's share, its items in the answer
// share, its state in the request memory, each item's send deadline).

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <atomic>
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
#include "server/testing/raw_h2_frames.h"

namespace tailgate::server::read_door {
namespace {

using ::tailgate::server::testing::AsyncRead;
using ::tailgate::server::testing::ConnectToLoopback;
using ::tailgate::server::testing::DoorHarness;
using ::tailgate::server::testing::FakeLoopEngine;
using ::tailgate::server::testing::Frame;
using ::tailgate::server::testing::ReadCallHeaders;
using ::tailgate::server::testing::ReadManyMessage;
using ::tailgate::server::testing::ReadMessage;
using ::tailgate::server::testing::SendAll;
using ::tailgate::server::testing::WaitForFrame;
using ::tailgate::server::testing::WaitForReset;

// The client's preface and SETTINGS; with `window_shut`, every stream's
// window is 0 (INITIAL_WINDOW_SIZE 0).
std::string Opening(bool window_shut) {
  std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  const char window_zero[] = {0, 4, 0, 0, 0, 0};
  out += Frame(testing::kSettings, 0, 0,
               window_shut ? absl::string_view(window_zero, 6) : "");
  return out;
}

// A ReadMany call for `paths` on `stream`, request ended.
std::string ReadManyCall(uint32_t stream,
                         const std::vector<std::string>& paths) {
  return Frame(testing::kHeaders, testing::kEndHeaders, stream,
               ReadCallHeaders("application/grpc", "ReadMany")) +
         Frame(testing::kData, testing::kEndStream, stream,
               ReadManyMessage(paths));
}

std::string WindowUpdate(uint32_t stream, uint32_t increment) {
  std::string payload(4, '\0');
  for (int i = 0; i < 4; ++i) {
    payload[i] = static_cast<char>(increment >> (24 - 8 * i));
  }
  return Frame(testing::kWindowUpdate, 0, stream, payload);
}

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

// Two batches and a Read on one connection hold no more reads than the
// connection's share: the first batch takes it, the second waits (never
// failing for it), the Read is refused; another connection is served.
TEST_F(ReadDoorTest, ReadManyReadsCountInTheConnectionsShare) {
  ReadDoorOptions options;
  options.max_reads_per_connection = 2;
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(
      fd,
      Opening(/*window_shut=*/true) + ReadManyCall(1, {"/a1", "/a2", "/a3"}) +
          ReadManyCall(3, {"/b1", "/b2"}) +
          Frame(testing::kHeaders, testing::kEndHeaders, 5, ReadCallHeaders()) +
          Frame(testing::kData, testing::kEndStream, 5, ReadMessage("/read"))));
  EXPECT_EQ(Read(0).read.target, "/a1");
  EXPECT_EQ(Read(1).read.target, "/a2");
  EXPECT_TRUE(WaitForFrame(fd, testing::kHeaders, 5).has_value());  // refused
  std::unique_ptr<AsyncRead> other = StartRead(*stub_, "/other");
  const FakeLoopEngine::Submitted read = Read(2);
  EXPECT_EQ(read.read.target, "/other");
  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "ok")));
  ASSERT_TRUE(other->Wait());
  EXPECT_TRUE(other->status.ok()) << other->status.error_message();
  EXPECT_EQ(engine_->submitted().size(), 3u);
  EXPECT_EQ(rejections_.Snapshot().too_many_calls, 1u);  // the Read alone
  close(fd);
}

// Batch reads together leave room for Read calls: with --max_requests 4
// and batches held to 2, a batch of 4 runs 2 and a Read is served beside
// it; the batch's next read starts when one of its own comes back.
TEST_F(ReadDoorTest, ReadManyReadsLeaveRoomForReadCalls) {
  ReadDoorOptions options;
  options.max_batch_reads_in_flight = 2;
  Start(/*max_calls=*/4, /*max_bytes=*/1 << 20, options);
  AsyncReadMany batch(*stub_, {"/1", "/2", "/3", "/4"});
  const uint64_t first = Read(0).id;
  Read(1);
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::HedgedRead::NewStub(channel);
  std::unique_ptr<AsyncRead> read = StartRead(*stub, "/read");
  const FakeLoopEngine::Submitted submitted = Read(2);
  EXPECT_EQ(submitted.read.target, "/read");
  ASSERT_TRUE(engine_->Answer(submitted.id, DoorHarness::Response(200, "r")));
  ASSERT_TRUE(read->Wait());
  EXPECT_TRUE(read->status.ok()) << read->status.error_message();
  ASSERT_TRUE(engine_->Answer(first, DoorHarness::Response(200, "1")));
  EXPECT_EQ(Read(3).read.target, "/3");
  EXPECT_EQ(rejections_.Snapshot().too_many_calls, 0u);
}

// A batch that found its connection's share full starts once a place comes
// back, from another call of the connection.
TEST_F(ReadDoorTest, AReadManyWaitingForItsConnectionsShareStartsLater) {
  ReadDoorOptions options;
  options.max_reads_per_connection = 2;
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, Opening(/*window_shut=*/false) +
                              ReadManyCall(1, {"/a1", "/a2"}) +
                              ReadManyCall(3, {"/b1"})));
  const uint64_t a1 = Read(0).id, a2 = Read(1).id;
  std::unique_ptr<AsyncRead> other = StartRead(*stub_, "/other");
  const FakeLoopEngine::Submitted read = Read(2);
  EXPECT_EQ(read.read.target, "/other");  // /b1 waits
  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "ok")));
  ASSERT_TRUE(other->Wait());
  ASSERT_TRUE(engine_->Answer(a1, DoorHarness::Response(200, "1")));
  const FakeLoopEngine::Submitted b1 = Read(3);
  EXPECT_EQ(b1.read.target, "/b1");
  ASSERT_TRUE(engine_->Answer(a2, DoorHarness::Response(200, "2")));
  ASSERT_TRUE(engine_->Answer(b1.id, DoorHarness::Response(200, "3")));
  EXPECT_TRUE(WaitForFrame(fd, testing::kHeaders, 3).has_value());
  EXPECT_EQ(rejections_.Snapshot().too_many_calls, 0u);
  close(fd);
}

// A client that takes none of its items holds at most its connection's
// share of the answer bytes: an answer past it is dropped at once (its
// bytes and slot back) and another connection's answer still fits.
TEST_F(ReadDoorTest, ReadManyItemsCountInTheConnectionsAnswerShare) {
  ReadDoorOptions options;
  options.max_answer_bytes_per_connection = 3000;
  Start(/*max_calls=*/64, /*max_bytes=*/5000, options);
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(
      fd, Opening(/*window_shut=*/true) + ReadManyCall(1, {"/a", "/b"})));
  const uint64_t a = Read(0).id, b = Read(1).id;
  ASSERT_TRUE(
      engine_->Answer(a, DoorHarness::Response(200, std::string(2000, 'a'))));
  ASSERT_TRUE(
      engine_->Answer(b, DoorHarness::Response(200, std::string(2000, 'b'))));
  std::unique_ptr<AsyncRead> other = StartRead(*stub_, "/other");
  const FakeLoopEngine::Submitted read = Read(2);
  ASSERT_TRUE(engine_->Answer(
      read.id, DoorHarness::Response(200, std::string(2000, 'c'))));
  ASSERT_TRUE(other->Wait());
  EXPECT_TRUE(other->status.ok()) << other->status.error_message();
  EXPECT_EQ(other->response.body().size(), 2000u);
  EXPECT_EQ(rejections_.Snapshot().dropped_buffer_full, 1u);
  close(fd);
}

// A batch's state is charged to the request memory before it starts: one
// that does not fit is refused whole, counted once, no read submitted.
TEST_F(ReadDoorTest, AReadManyWhoseStateDoesNotFitTheRequestMemoryIsRefused) {
  ReadDoorOptions options;
  options.max_request_bytes = 64 << 10;
  options.max_message_bytes = 16 << 10;
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  std::vector<std::string> paths;
  for (int i = 0; i < 300; ++i) paths.push_back(absl::StrCat("/", i));
  AsyncReadMany too_big(*stub_, paths);
  const grpc::Status status = too_big.Wait();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(
      absl::StrContains(status.error_message(), "--max_grpc_memory_bytes"))
      << status.error_message();
  EXPECT_TRUE(too_big.items().empty());
  EXPECT_EQ(engine_->submitted().size(), 0u);
  EXPECT_EQ(rejections_.Snapshot().too_many_calls, 1u);
  paths.resize(50);  // 50 * kBatchReadBytes and its message fit
  AsyncReadMany fits(*stub_, paths, /*max_in_flight=*/1);
  EXPECT_EQ(Read(0).read.target, "/0");
}

// A cancelled batch gives its request memory back once its reads are
// drained: a batch that did not fit beside it fits then.
TEST_F(ReadDoorTest, ACancelledReadManyGivesItsRequestMemoryBack) {
  std::vector<std::string> paths;
  for (int i = 0; i < 40; ++i) paths.push_back(absl::StrCat("/", i));
  v1::ReadManyRequest probe;
  for (const std::string& path : paths) probe.add_reads()->set_path(path);
  // What the door charges for it (batch_call.h: the parsed request and
  // kBatchReadBytes, 64, a read), and what a call is counted besides
  // (read_door_impl.h: kCallBytes, 1 KiB).
  const int64_t charge =
      static_cast<int64_t>(probe.SpaceUsedLong()) + 64 * probe.reads_size();
  constexpr int64_t kCall = 1024;
  ReadDoorOptions options;
  options.max_message_bytes = 4096;
  // A connection's share (an eighth) holds one batch and a call or two,
  // not two batches.
  options.max_request_bytes = 8 * (charge + 3 * kCall);
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  auto first = std::make_unique<AsyncReadMany>(*stub_, paths,
                                               /*max_in_flight=*/1);
  const uint64_t read = Read(0).id;
  AsyncReadMany refused(*stub_, paths, /*max_in_flight=*/1);
  EXPECT_EQ(refused.Wait().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  first->Cancel();
  EXPECT_EQ(first->Wait().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(engine_->WaitForCancelled(read, kWait));
  // The call is freed on the loop's turn after its reads are drained:
  // asked again until it fits, within kWait.
  const absl::Time give_up = absl::Now() + kWait;
  bool started = false;
  while (!started && absl::Now() < give_up) {
    AsyncReadMany again(*stub_, paths, /*max_in_flight=*/1);
    started = engine_->WaitForRead(1, absl::Milliseconds(200)).has_value();
  }
  EXPECT_TRUE(started);
}

// Each item must be taken within --send_timeout of its queueing: a client
// that doles its window out a few bytes at a time, fast enough to take
// each item in less than the timeout but not all of them, has the stream
// reset.
TEST_F(ReadDoorTest, AReadManyTrickledWindowDoesNotExtendTheSendDeadline) {
  ReadDoorOptions options;
  options.send_timeout = absl::Milliseconds(400);
  Start(/*max_calls=*/64, /*max_bytes=*/1 << 20, options);
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, Opening(/*window_shut=*/true) +
                              ReadManyCall(1, {"/1", "/2", "/3", "/4", "/5",
                                               "/6", "/7", "/8"})));
  for (size_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(
        engine_->Answer(Read(i).id, DoorHarness::Response(200, "0123456789")));
  }
  // About 30 bytes an item: 8 bytes every 50 ms takes one in about 200 ms
  // (within the timeout), all eight in about 1.6 s (past it).
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop.load()) {
      if (!SendAll(fd, WindowUpdate(1, 8))) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  const std::optional<uint32_t> reset = WaitForReset(fd, 1);
  stop = true;
  trickle.join();
  ASSERT_TRUE(reset.has_value());
  EXPECT_EQ(*reset, 0x8u);  // CANCEL
  EXPECT_TRUE(WaitForNoCalls());
  close(fd);
}

}  // namespace
}  // namespace tailgate::server::read_door
