// The read door (--read_listen) through the real binary with grpc++
// clients, for what happens while reads are in flight: a client's cancel,
// --max_requests, many concurrent calls on one connection under a small
// --max_streams_per_connection, and the drain. A connection closed under a
// read is tested with raw frames (tests/hostile).

#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/testing/async_read.h"
#include "tests/e2e/read_door_fixture.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {
namespace {

using ::tailgate::server::testing::AsyncRead;

ReplicaResponse Hang() {
  ReplicaResponse response;
  response.fault = ReplicaResponse::Fault::kHang;
  return response;
}

// A client cancels its call while the replica is still answering: the read
// is cancelled (counted as the caller's cancel) and its attempt aborted.
TEST_F(ReadDoorE2eTest, AClientsCancelCancelsTheRead) {
  Replica& replica = AddReplica(Always(Hang()));
  StartDoor({"--hedge_fraction=0", "--timeout=30s"});
  AsyncRead call;
  call.request.set_path("/hang");
  call.context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
  call.Start(*door_);
  ASSERT_TRUE(replica.WaitForRequests(1, kWait));
  EXPECT_EQ(Stats().in_flight(), 1);

  call.context.TryCancel();
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(call.status.error_code(), grpc::StatusCode::CANCELLED);
  // The sidecar's attempt goes: the replica sees its connection close.
  EXPECT_TRUE(replica.WaitForDisconnectsBeforeResponse(1, kWait));
  const v1::GetStatsResponse stats = StatsWhen(
      [](const v1::GetStatsResponse& s) { return s.cancelled() == 1; });
  EXPECT_EQ(stats.cancelled(), 1u);
  EXPECT_EQ(stats.in_flight(), 0);
  EXPECT_EQ(stats.timeouts(), 0u);

  // The connection is still good for reads.
  replica.SetHandler(Always(Body("next")));
  v1::ReadResponse response;
  const grpc::Status next = DoorRead("/next", &response);
  ASSERT_TRUE(next.ok()) << next.error_message();
  EXPECT_EQ(response.body(), "next");
}

// --max_requests is shared by both doors: a read held on either one takes
// the slot, and the other door refuses at once, with the same status.
TEST_F(ReadDoorE2eTest, MaxRequestsInFlightIsResourceExhausted) {
  Replica& replica = AddReplica(Always(Hang()));
  StartDoor({"--max_requests=1", "--hedge_fraction=0", "--timeout=30s"});
  AsyncRead holder;
  holder.request.set_path("/hold");
  holder.context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
  holder.Start(*door_);
  absl::Cleanup release = [&holder] {
    holder.context.TryCancel();
    EXPECT_TRUE(holder.Wait());
  };
  ASSERT_TRUE(replica.WaitForRequests(1, kWait));

  v1::ReadResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status door = DoorRead("/second", &response);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));  // refused, not queued
  EXPECT_EQ(door.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << door.error_message();
  EXPECT_TRUE(absl::StrContains(door.error_message(), "max_requests"))
      << door.error_message();
  const grpc::Status listen = Read("/second", &response);
  EXPECT_EQ(listen.error_code(), door.error_code());
  EXPECT_EQ(listen.error_message(), door.error_message());
  EXPECT_EQ(replica.requests_received(), 1);
  EXPECT_EQ(Stats().rejected(), 2u);

  // Once the held read is over, the door admits again.
  holder.context.TryCancel();
  ASSERT_TRUE(holder.Wait());
  replica.SetHandler(Always(Body("ok")));
  StatsWhen([](const v1::GetStatsResponse& s) { return s.in_flight() == 0; });
  const grpc::Status again = DoorRead("/again", &response);
  ASSERT_TRUE(again.ok()) << again.error_message();
  EXPECT_EQ(response.body(), "ok");
}

// 200 calls at once on one channel (one HTTP/2 connection) to a door that
// allows 4 streams per connection: every call is answered, with its own
// answer. gRPC clients keep streams beyond the peer's
// MAX_CONCURRENT_STREAMS queued (and retry a refused stream). The engine
// takes 4 attempts at once (--max_attempts), so a fifth read let in at
// once would be refused RESOURCE_EXHAUSTED: the door's stream limit is
// what keeps every call OK.
TEST_F(ReadDoorE2eTest, ManyCallsOnOneChannelAreAllAnswered) {
  constexpr int kCalls = 200;
  Replica& replica = AddReplica([](const ReplicaRequest& request) {
    return Body("for " + request.uri, absl::Milliseconds(10));
  });
  StartDoor({"--hedge_fraction=0", "--max_streams_per_connection=4",
             "--max_requests=256", "--max_attempts=4", "--timeout=30s"});
  std::vector<std::unique_ptr<AsyncRead>> calls;
  for (int i = 0; i < kCalls; ++i) {
    calls.push_back(std::make_unique<AsyncRead>());
    AsyncRead& call = *calls.back();
    call.request.set_path(absl::StrCat("/item/", i));
    call.context.set_deadline(
        absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    call.Start(*door_);
  }
  int ok = 0;
  for (int i = 0; i < kCalls; ++i) {
    AsyncRead& call = *calls[i];
    ASSERT_TRUE(call.Wait(absl::Seconds(30))) << i;
    EXPECT_TRUE(call.status.ok()) << i << ": " << call.status.error_code()
                                  << " " << call.status.error_message();
    if (!call.status.ok()) continue;
    EXPECT_EQ(call.response.body(), absl::StrCat("for /item/", i));
    ++ok;
  }
  EXPECT_EQ(ok, kCalls);
  EXPECT_EQ(replica.requests_received(), kCalls);
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.requests(), static_cast<uint64_t>(kCalls));
  EXPECT_EQ(stats.rejected(), 0u);
}

// SIGTERM while a read is in flight on the door: the read finishes with its
// answer, a new one on the same connection is refused UNAVAILABLE (as on
// --listen), and the process exits 0 once the read is over.
TEST_F(ReadDoorE2eTest, DrainFinishesReadsInFlightAndRefusesNewOnes) {
  Replica& replica = AddReplica([](const ReplicaRequest& request) {
    return Body("done", request.uri == "/warm" ? absl::ZeroDuration()
                                               : absl::Seconds(2));
  });
  StartDoor({"--hedge_fraction=0", "--timeout=5s", "--drain_timeout=10s"});
  // The channel is connected before the drain.
  v1::ReadResponse warmed;
  ASSERT_TRUE(DoorRead("/warm", &warmed).ok());

  AsyncRead in_flight;
  in_flight.request.set_path("/slow");
  in_flight.context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
  in_flight.Start(*door_);
  ASSERT_TRUE(replica.WaitForRequests(2, kWait));

  tailgate_->Signal(SIGTERM);
  ASSERT_TRUE(tailgate_->WaitForLine("event=drain_start", kWait).has_value());
  v1::ReadResponse response;
  const grpc::Status refused = DoorRead("/new", &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE)
      << refused.error_message();
  EXPECT_EQ(refused.error_message(), "server is draining");

  ASSERT_TRUE(in_flight.Wait());
  ASSERT_TRUE(in_flight.status.ok()) << in_flight.status.error_message();
  EXPECT_EQ(in_flight.response.status(), 200);
  EXPECT_EQ(in_flight.response.body(), "done");
  EXPECT_EQ(tailgate_->WaitForExit(kWait), 0);
  EXPECT_TRUE(absl::StrContains(tailgate_->stderr_text(),
                                "event=drain_end in_flight=0"))
      << tailgate_->stderr_text();
  EXPECT_EQ(replica.requests_received(), 2);
}

}  // namespace
}  // namespace tailgate::testing
