#include "experiment/load/http_read_target.h"

#include <curl/curl.h>

#include <future>
#include <memory>
#include <string>

#include "experiment/config/workload.h"
#include "gtest/gtest.h"
#include "tests/replica/replica.h"

namespace tailgate::experiment {
namespace {

class HttpReadTargetTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  static void TearDownTestSuite() { curl_global_cleanup(); }

  // Starts a replica answering every request with `response`, and a target
  // reading from it.
  void Serve(testing::ReplicaResponse response) {
    absl::StatusOr<std::unique_ptr<testing::Replica>> replica =
        testing::Replica::Start(testing::Always(std::move(response)));
    ASSERT_TRUE(replica.ok()) << replica.status();
    replica_ = *std::move(replica);
    absl::StatusOr<std::unique_ptr<HttpReadTarget>> target =
        HttpReadTarget::Start(replica_->url());
    ASSERT_TRUE(target.ok()) << target.status();
    target_ = *std::move(target);
  }

  // One read through the target, waited for (a std::promise, which
  // ThreadSanitizer sees synchronise, unlike absl::Notification).
  std::string Read(absl::Duration deadline) {
    std::promise<std::string> error;
    std::future<std::string> got = error.get_future();
    target_->StartRead("/read?id=1", deadline, [&error](std::string label) {
      error.set_value(std::move(label));
    });
    return got.get();
  }

  std::unique_ptr<testing::Replica> replica_;
  std::unique_ptr<HttpReadTarget> target_;  // destroyed first
};

TEST_F(HttpReadTargetTest, AnOkAnswerOnAKeptConnection) {
  testing::ReplicaResponse response;
  response.body = std::string(kReplicaBody);
  Serve(response);
  EXPECT_EQ(Read(absl::Seconds(3)), "");
  EXPECT_EQ(Read(absl::Seconds(3)), "");
  EXPECT_EQ(replica_->requests_received(), 2);
  EXPECT_EQ(replica_->connections_accepted(), 1);
}

TEST_F(HttpReadTargetTest, AnHttpErrorAndAWrongBody) {
  testing::ReplicaResponse response;
  response.status = 503;
  Serve(response);
  EXPECT_EQ(Read(absl::Seconds(3)), "http_503");
  testing::ReplicaResponse wrong;
  wrong.body = "stale";
  replica_->SetHandler(testing::Always(wrong));
  EXPECT_EQ(Read(absl::Seconds(3)), kWrongBody);
}

TEST_F(HttpReadTargetTest, AHangEndsAtTheDeadline) {
  testing::ReplicaResponse response;
  response.fault = testing::ReplicaResponse::Fault::kHang;
  Serve(response);
  EXPECT_EQ(Read(absl::Milliseconds(100)), "timeout");
}

}  // namespace
}  // namespace tailgate::experiment
