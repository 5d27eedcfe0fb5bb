#include "server/observability/http_endpoints.h"

#include <atomic>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "server/testing/http_get.h"

namespace tailgate::server {
namespace {

using ::tailgate::server::testing::HttpFetch;
using ::tailgate::server::testing::HttpGet;
using ::tailgate::server::testing::HttpReply;

class HttpEndpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<HttpEndpoints>> started =
        HttpEndpoints::Start(*ParseListenAddress("127.0.0.1:0"),
                             {[this] {
                                ++scrapes_;
                                return std::string("tailgate_up 1\n");
                              },
                              [this] { return ready_.load(); }});
    ASSERT_TRUE(started.ok()) << started.status();
    http_ = *std::move(started);
    port_ = http_->address().port;
  }

  HttpReply Get(absl::string_view path) {
    absl::StatusOr<HttpReply> reply = HttpGet(port_, path);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? *reply : HttpReply{};
  }

  std::atomic<int> scrapes_{0};
  std::atomic<bool> ready_{true};
  std::unique_ptr<HttpEndpoints> http_;
  int port_ = 0;
};

TEST_F(HttpEndpointsTest, ReportsTheEphemeralPortItBound) {
  EXPECT_GT(port_, 0);
  EXPECT_EQ(http_->address().ToString(), absl::StrCat("127.0.0.1:", port_));
}

TEST_F(HttpEndpointsTest, MetricsServesTheExpositionWithItsContentType) {
  HttpReply reply = Get("/metrics");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "tailgate_up 1\n");
  EXPECT_TRUE(absl::StrContains(
      reply.head, "Content-Type: text/plain; version=0.0.4; charset=utf-8"))
      << reply.head;
  EXPECT_EQ(scrapes_.load(), 1);
}

TEST_F(HttpEndpointsTest, MetricsIgnoresTheQueryString) {
  EXPECT_EQ(Get("/metrics?x=1").status, 200);
}

TEST_F(HttpEndpointsTest, HealthzIsOkEvenWhileDraining) {
  EXPECT_EQ(Get("/healthz").status, 200);
  EXPECT_EQ(Get("/healthz").body, "ok\n");
  ready_ = false;
  EXPECT_EQ(Get("/healthz").status, 200);
}

TEST_F(HttpEndpointsTest, ReadyzFlipsTo503WhenDraining) {
  EXPECT_EQ(Get("/readyz").status, 200);
  ready_ = false;
  HttpReply reply = Get("/readyz");
  EXPECT_EQ(reply.status, 503);
  EXPECT_EQ(reply.body, "draining\n");
}

TEST_F(HttpEndpointsTest, UnknownPathIs404) {
  EXPECT_EQ(Get("/").status, 404);
  EXPECT_EQ(Get("/metricsx").status, 404);
}

TEST_F(HttpEndpointsTest, NonGetMethodsAre405WithAllow) {
  for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "PATCH"}) {
    absl::StatusOr<HttpReply> reply = HttpFetch(port_, method, "/metrics");
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(reply->status, 405) << method;
    EXPECT_TRUE(absl::StrContains(reply->head, "Allow: GET, HEAD")) << method;
  }
  EXPECT_EQ(scrapes_.load(), 0);
}

TEST_F(HttpEndpointsTest, HeadIsAllowedAndHasNoBody) {
  absl::StatusOr<HttpReply> reply = HttpFetch(port_, "HEAD", "/healthz");
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->body, "");
}

TEST(HttpEndpointsStartTest, RefusesUnixSocketAndBusyPort) {
  HttpEndpoints::Handlers handlers{[] { return std::string(); },
                                   [] { return true; }};
  EXPECT_FALSE(
      HttpEndpoints::Start(*ParseListenAddress("unix:/tmp/x.sock"), handlers)
          .ok());
  absl::StatusOr<std::unique_ptr<HttpEndpoints>> first =
      HttpEndpoints::Start(*ParseListenAddress("127.0.0.1:0"), handlers);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<HttpEndpoints>> second =
      HttpEndpoints::Start((*first)->address(), handlers);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

TEST(HttpEndpointsStartTest, StopsPromptlyRightAfterStart) {
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<std::unique_ptr<HttpEndpoints>> http = HttpEndpoints::Start(
        *ParseListenAddress("127.0.0.1:0"),
        {[] { return std::string(); }, [] { return true; }});
    ASSERT_TRUE(http.ok()) << http.status();
  }
}

}  // namespace
}  // namespace tailgate::server
