// --listen as served by either front (--listen_front): the loop front (the
// default), which serves every call on the engine's loop with its own
// HTTP/2, and the gRPC library's server. A client must not be able to tell
// them apart by what they answer: Read, health (Check and Watch, through a
// drain), reflection in both versions and unknown methods, on one
// connection, and the limits of a call other than Read.

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/testing/async_read.h"
#include "server/testing/raw_grpc.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {
namespace {

using ::tailgate::server::testing::AsyncRead;
using ::tailgate::server::testing::HealthCheck;
using ::tailgate::server::testing::HealthWatch;
using ::tailgate::server::testing::kNotServing;
using ::tailgate::server::testing::kServing;
using ::tailgate::server::testing::ReflectionListServices;

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// One unary call of `method` with `message` as its raw request bytes.
grpc::Status CallRaw(const std::shared_ptr<grpc::Channel>& channel,
                     const std::string& method, const std::string& message) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
  grpc::CompletionQueue cq;
  grpc::Slice slice(message);
  const grpc::ByteBuffer request(&slice, 1);
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
      stub.PrepareUnaryCall(&context, method, request, &cq);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  void* const tag = reinterpret_cast<void*>(1);
  call->Finish(&response, &status, tag);
  void* got = nullptr;
  bool ok = false;
  cq.Next(&got, &ok);
  return status;
}

class LoopFrontE2eTest : public TailgateE2eTest,
                         public ::testing::WithParamInterface<const char*> {
 protected:
  void StartFront(std::vector<std::string> flags = {}) {
    flags.push_back(absl::StrCat("--listen_front=", GetParam()));
    StartTailgate(std::move(flags));
  }
};

TEST_P(LoopFrontE2eTest, ReadsHealthAndReflectionShareOneConnection) {
  AddReplica(Always(Body("ok")));
  StartFront({"--hedge_fraction=0"});
  v1::ReadResponse response;
  ASSERT_TRUE(Read("/first", &response).ok());
  EXPECT_EQ(response.body(), "ok");
  EXPECT_EQ(HealthCheck(channel_, "").value_or(-1), kServing);
  EXPECT_EQ(HealthCheck(channel_, "tailgate.v1.HedgedRead").value_or(-1),
            kServing);
  EXPECT_EQ(HealthCheck(channel_, "no.such.Service").status().code(),
            absl::StatusCode::kNotFound);
  for (const char* version : {"v1", "v1alpha"}) {
    absl::StatusOr<std::vector<std::string>> services =
        ReflectionListServices(channel_, version);
    ASSERT_TRUE(services.ok()) << version << ": " << services.status();
    EXPECT_TRUE(Contains(*services, "tailgate.v1.HedgedRead"))
        << version << ": " << absl::StrJoin(*services, ",");
    EXPECT_TRUE(Contains(*services, "grpc.health.v1.Health"))
        << version << ": " << absl::StrJoin(*services, ",");
  }
  ASSERT_TRUE(Read("/second", &response).ok());
  EXPECT_EQ(response.body(), "ok");
  // Still the one connection the channel opened.
  EXPECT_EQ(channel_->GetState(false), GRPC_CHANNEL_READY);
}

TEST_P(LoopFrontE2eTest, MethodsNotServedHereAreUnimplemented) {
  AddReplica(Always(Body("ok")));
  StartFront();
  EXPECT_EQ(CallRaw(channel_, "/tailgate.v1.Nope/Nothing", "").error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
  // Admin lives on --admin only.
  std::unique_ptr<v1::Admin::Stub> admin = v1::Admin::NewStub(channel_);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
  v1::GetStatsResponse stats;
  EXPECT_EQ(admin->GetStats(&context, {}, &stats).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
  v1::ReadResponse response;
  EXPECT_TRUE(Read("/after", &response).ok());
}

TEST_P(LoopFrontE2eTest, AHealthWatchSeesTheDrainWhileAReadFinishes) {
  Replica& replica = AddReplica(Always(Body("done", absl::Seconds(2))));
  StartFront({"--hedge_fraction=0", "--timeout=4s"});
  HealthWatch watch(channel_, "tailgate.v1.HedgedRead");
  EXPECT_EQ(watch.Next(kWait).value_or(-1), kServing);
  AsyncRead in_flight;
  in_flight.request.set_path("/slow");
  in_flight.Start(*reads_);
  ASSERT_TRUE(replica.WaitForRequests(1, kWait));

  tailgate_->Signal(SIGTERM);
  EXPECT_EQ(watch.Next(kWait).value_or(-1), kNotServing);
  ASSERT_TRUE(in_flight.Wait());
  EXPECT_TRUE(in_flight.status.ok()) << in_flight.status.error_message();
  EXPECT_EQ(in_flight.response.body(), "done");
  watch.Cancel();
  EXPECT_EQ(tailgate_->WaitForExit(kWait), 0);
}

// Each cancelled watch must end its stream at the gRPC server too: with
// four streams a connection, the fifth watch would wait forever otherwise.
TEST_P(LoopFrontE2eTest, CancelledWatchesEndTheirStreamsAtTheServer) {
  AddReplica(Always(Body("ok")));
  StartFront({"--max_streams_per_connection=4"});
  for (int i = 0; i < 12; ++i) {
    HealthWatch watch(channel_, "");
    ASSERT_EQ(watch.Next(kWait).value_or(-1), kServing) << "watch " << i;
    watch.Cancel();
  }
  EXPECT_EQ(HealthCheck(channel_, "").value_or(-1), kServing);
  v1::ReadResponse response;
  EXPECT_TRUE(Read("/after", &response).ok());
}

TEST_P(LoopFrontE2eTest, AHealthMessageOverTheLimitIsResourceExhausted) {
  AddReplica(Always(Body("ok")));
  StartFront();
  // HealthCheckRequest.service (field 1) of 100 KiB: over the 64 KiB a
  // request message may have.
  const std::string service(100 * 1024, 's');
  std::string message = "\x0a";
  for (uint64_t n = service.size();; n >>= 7) {
    message.push_back(static_cast<char>((n & 0x7f) | (n >= 0x80 ? 0x80 : 0)));
    if (n < 0x80) break;
  }
  message += service;
  const grpc::Status status =
      CallRaw(channel_, "/grpc.health.v1.Health/Check", message);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << status.error_message();
  EXPECT_EQ(HealthCheck(channel_, "").value_or(-1), kServing);
}

TEST_P(LoopFrontE2eTest, ReadsAndHealthCallsInterleaveOnOneConnection) {
  AddReplica(Always(Body("ok", absl::Milliseconds(5))));
  StartFront({"--hedge_fraction=0"});
  constexpr int kThreads = 8;
  constexpr int kRounds = 10;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t, &failures] {
      for (int i = 0; i < kRounds; ++i) {
        v1::ReadResponse response;
        if (!Read(absl::StrCat("/r", t, "-", i), &response).ok() ||
            response.body() != "ok") {
          ++failures[t];
        }
        if (HealthCheck(channel_, "").value_or(-1) != kServing) ++failures[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << t;
}

INSTANTIATE_TEST_SUITE_P(Fronts, LoopFrontE2eTest,
                         ::testing::Values("loop", "grpc"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
}  // namespace tailgate::testing
