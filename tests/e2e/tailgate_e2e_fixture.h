// TailgateE2eTest: a gtest fixture for end-to-end tests of the real
// //server:tailgate binary (a data dependency of the test) against real
// loopback replicas.
//
// Example:
//   TEST_F(TailgateE2eTest, Reads) {
//     AddReplica(Always(Body("ok")));
//     StartTailgate({"--hedge_fraction=0"});
//     v1::ReadResponse response;
//     ASSERT_TRUE(Read("/x", &response).ok());
//   }
//
// Thread safety: the fixture's members are for the test's main thread;
// reads_ and admin_ (gRPC stubs) may be used from any thread.

#ifndef TAILGATE_TESTS_E2E_TAILGATE_E2E_FIXTURE_H_
#define TAILGATE_TESTS_E2E_TAILGATE_E2E_FIXTURE_H_

#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "tests/process/tailgate_process.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {

// How long the fixture waits for anything that should happen promptly.
inline constexpr absl::Duration kWait = absl::Seconds(10);

// The tailgate binary in the test's runfiles.
inline std::string TailgateBinary() {
  const char* runfiles = std::getenv("TEST_SRCDIR");
  return absl::StrCat(runfiles != nullptr ? runfiles : ".",
                      "/tailgate/server/tailgate");
}

// A 200 answer with `body`, after `delay`.
inline ReplicaResponse Body(std::string body, absl::Duration delay = {}) {
  ReplicaResponse response;
  response.body = std::move(body);
  response.delay = delay;
  return response;
}

class TailgateE2eTest : public ::testing::Test {
 protected:
  Replica& AddReplica(Handler handler) {
    absl::StatusOr<std::unique_ptr<Replica>> replica =
        Replica::Start(std::move(handler));
    EXPECT_TRUE(replica.ok()) << replica.status();
    replicas_.push_back(*std::move(replica));
    return *replicas_.back();
  }

  // Starts tailgate on every replica added so far.
  void StartTailgate(std::vector<std::string> flags = {}) {
    std::vector<std::string> urls;
    for (const auto& replica : replicas_) urls.push_back(replica->url());
    StartTailgateWithBackends(urls, std::move(flags));
  }

  // Starts tailgate with `backends` as its default replica set.
  void StartTailgateWithBackends(const std::vector<std::string>& backends,
                                 std::vector<std::string> flags = {}) {
    std::string backends_flag = "--backends=";
    for (const std::string& url : backends) {
      absl::StrAppend(&backends_flag, backends_flag.back() == '=' ? "" : ",",
                      url);
    }
    flags.insert(flags.begin(), backends_flag);
    StartTailgateWithFlags(std::move(flags));
  }

  // Starts tailgate with `flags` only (such as --config, without
  // --backends).
  void StartTailgateWithFlags(const std::vector<std::string>& flags) {
    absl::StatusOr<std::unique_ptr<TailgateProcess>> process =
        TailgateProcess::Start(TailgateBinary(), flags);
    ASSERT_TRUE(process.ok()) << process.status();
    AdoptTailgate(*std::move(process));
  }

  // Talks to `process` (started by the test, e.g. with an environment of
  // its own) from now on.
  void AdoptTailgate(std::unique_ptr<TailgateProcess> process) {
    tailgate_ = std::move(process);
    channel_ = grpc::CreateChannel(tailgate_->grpc_address(),
                                   grpc::InsecureChannelCredentials());
    reads_ = v1::HedgedRead::NewStub(channel_);
    admin_channel_ = grpc::CreateChannel(tailgate_->admin_address(),
                                         grpc::InsecureChannelCredentials());
    admin_ = v1::Admin::NewStub(admin_channel_);
  }

  grpc::Status Read(const v1::ReadRequest& request,
                    v1::ReadResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
    return reads_->Read(&context, request, response);
  }

  grpc::Status Read(const std::string& path, v1::ReadResponse* response) {
    v1::ReadRequest request;
    request.set_path(path);
    return Read(request, response);
  }

  v1::GetStatsResponse Stats() {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
    v1::GetStatsResponse stats;
    EXPECT_TRUE(admin_->GetStats(&context, {}, &stats).ok());
    return stats;
  }

  std::vector<std::unique_ptr<Replica>> replicas_;
  std::unique_ptr<TailgateProcess> tailgate_;
  std::shared_ptr<grpc::Channel> channel_;
  std::shared_ptr<grpc::Channel> admin_channel_;
  std::unique_ptr<v1::HedgedRead::Stub> reads_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_E2E_TAILGATE_E2E_FIXTURE_H_
