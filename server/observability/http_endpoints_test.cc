#include "server/observability/http_endpoints.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
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

// A raw loopback client connection, closed by the destructor.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address),
                         sizeof(address)) == 0;
  }
  ~RawClient() { close(fd_); }

  bool connected() const { return connected_; }
  bool Send(absl::string_view bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Reads until the server closes (true) or `timeout` passes (false).
  bool WaitClosed(absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (true) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return false;
      pollfd p = {fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1) <=
          0) {
        continue;
      }
      char buffer[1 << 16];
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
      if (n > 0) received_.append(buffer, static_cast<size_t>(n));
    }
  }
  // Reads until `text` has arrived (true), the server closes or `timeout`
  // passes.
  bool WaitReceived(absl::string_view text, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!absl::StrContains(received_, text)) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return false;
      pollfd p = {fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1) <=
          0) {
        continue;
      }
      char buffer[1 << 16];
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return false;
      received_.append(buffer, static_cast<size_t>(n));
    }
    return true;
  }
  // Nothing to read and no close seen, now.
  bool Open() {
    pollfd p = {fd_, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
  }
  const std::string& received() const { return received_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string received_;
};

bool WaitFor(const std::function<bool()>& condition,
             absl::Duration timeout = absl::Seconds(5)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

class HttpEndpointsLimitsTest : public ::testing::Test {
 protected:
  void Start(HttpEndpointsLimits limits, std::string metrics = "up 1\n") {
    HttpEndpoints::Handlers handlers{
        [metrics] { return metrics; },
        [] { return true; },
        {},
        {},
        [this](uint64_t idle_closed, uint64_t refused) {
          std::lock_guard<std::mutex> lock(mu_);
          reports_.emplace_back(idle_closed, refused);
        }};
    absl::StatusOr<std::unique_ptr<HttpEndpoints>> started =
        HttpEndpoints::Start(*ParseListenAddress("127.0.0.1:0"),
                             std::move(handlers), limits);
    ASSERT_TRUE(started.ok()) << started.status();
    http_ = *std::move(started);
    port_ = http_->address().port;
  }
  std::vector<std::pair<uint64_t, uint64_t>> reports() {
    std::lock_guard<std::mutex> lock(mu_);
    return reports_;
  }
  HttpEndpoints::Connections connections() { return http_->connections(); }

  std::mutex mu_;
  std::vector<std::pair<uint64_t, uint64_t>> reports_;
  std::unique_ptr<HttpEndpoints> http_;
  int port_ = 0;
};

TEST_F(HttpEndpointsLimitsTest, SlowHeadersAreCutAtTheDeadlineFromAccept) {
  const absl::Duration kDeadline = absl::Seconds(1);
  Start({.header_timeout = kDeadline});
  const absl::Time start = absl::Now();
  RawClient slow(port_);
  ASSERT_TRUE(slow.connected());
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n";
  bool closed = false;
  for (size_t i = 0; i < request.size() && !closed; ++i) {
    if (!slow.Send(request.substr(i, 1))) break;  // already closed
    closed = slow.WaitClosed(absl::Milliseconds(200));
  }
  if (!closed) closed = slow.WaitClosed(absl::Seconds(5));
  const absl::Duration lasted = absl::Now() - start;
  ASSERT_TRUE(closed);
  EXPECT_GE(lasted, kDeadline - absl::Milliseconds(50));
  EXPECT_LT(lasted, kDeadline + absl::Milliseconds(700));
  EXPECT_EQ(slow.received(), "");
  EXPECT_TRUE(WaitFor([&] { return connections().open == 0; }));
}

TEST_F(HttpEndpointsLimitsTest, AtTheLimitTheLongestIdleMakesRoom) {
  Start({.max_connections = 3, .header_timeout = absl::Seconds(60)});
  RawClient first(port_), second(port_), third(port_);
  ASSERT_TRUE(first.connected() && second.connected() && third.connected());
  ASSERT_TRUE(WaitFor([&] { return connections().idle == 3; }));
  absl::StatusOr<HttpReply> reply = HttpGet(port_, "/healthz");
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->status, 200);
  EXPECT_TRUE(first.WaitClosed(absl::Seconds(5)));
  EXPECT_TRUE(second.Open());
  EXPECT_TRUE(third.Open());
  EXPECT_TRUE(WaitFor([&] { return connections().open == 2; }));
  EXPECT_EQ(reports(), (std::vector<std::pair<uint64_t, uint64_t>>{{1, 0}}));
}

TEST_F(HttpEndpointsLimitsTest, AtTheLimitWithNoneIdleTheNewOneIsClosed) {
  const absl::Duration kDeadline = absl::Milliseconds(1500);
  Start({.max_connections = 3, .header_timeout = kDeadline});
  std::vector<std::unique_ptr<RawClient>> partial;
  for (int i = 0; i < 3; ++i) {
    partial.push_back(std::make_unique<RawClient>(port_));
    ASSERT_TRUE(partial.back()->connected());
  }
  ASSERT_TRUE(WaitFor([&] { return connections().idle == 3; }));
  for (auto& client : partial) {
    ASSERT_TRUE(client->Send("GET /healthz HTTP/1.1\r\n"));
  }
  ASSERT_TRUE(WaitFor([&] { return connections().idle == 0; }));
  RawClient refused(port_);
  ASSERT_TRUE(refused.connected());
  EXPECT_TRUE(refused.WaitClosed(absl::Seconds(1)));
  EXPECT_EQ(refused.received(), "");
  for (auto& client : partial) EXPECT_TRUE(client->Open());
  for (auto& client : partial) {
    EXPECT_TRUE(client->WaitClosed(kDeadline + absl::Seconds(2)));
    EXPECT_EQ(client->received(), "");
  }
  absl::StatusOr<HttpReply> reply = HttpGet(port_, "/healthz");
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reports(), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 1}}));
}

TEST_F(HttpEndpointsLimitsTest, ClosesReportedAtMostOncePerInterval) {
  Start({.max_connections = 1,
         .header_timeout = absl::Seconds(60),
         .report_interval = absl::Milliseconds(500)});
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<RawClient>(port_));
    ASSERT_TRUE(clients.back()->connected());
    // Each new one closes the one before, then is idle itself.
    if (i > 0) {
      ASSERT_TRUE(clients[i - 1]->WaitClosed(absl::Seconds(5)));
    }
    ASSERT_TRUE(WaitFor([&] { return connections().idle == 1; }));
  }
  // The first close is reported at once, the second at the interval's end.
  EXPECT_TRUE(WaitFor([&] { return reports().size() == 2; }));
  EXPECT_EQ(reports(),
            (std::vector<std::pair<uint64_t, uint64_t>>{{1, 0}, {2, 0}}));
}

TEST_F(HttpEndpointsLimitsTest, AnAnswerNotTakenIsCutAtTheSendDeadline) {
  const absl::Duration kDeadline = absl::Milliseconds(500);
  const size_t kSize = 64 << 20;  // more than the sockets' buffers hold
  Start({.send_timeout = kDeadline}, std::string(kSize, 'x'));
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  const absl::Time start = absl::Now();
  ASSERT_TRUE(WaitFor([&] { return connections().open == 1; }));
  ASSERT_TRUE(client.Send("GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  ASSERT_TRUE(WaitFor([&] { return connections().open == 0; }));
  EXPECT_GE(absl::Now() - start, kDeadline - absl::Milliseconds(50));
  EXPECT_TRUE(client.WaitClosed(absl::Seconds(5)));
  EXPECT_TRUE(absl::StartsWith(client.received(), "HTTP/1.1 200"));
  EXPECT_LT(client.received().size(), kSize);
}

TEST_F(HttpEndpointsLimitsTest, AfterAnAnswerTheNextHeadersHaveTheDeadline) {
  const absl::Duration kDeadline = absl::Milliseconds(800);
  Start({.header_timeout = kDeadline});
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  ASSERT_TRUE(client.WaitReceived("ok\n", absl::Seconds(5)));
  const absl::Time answered = absl::Now();
  EXPECT_TRUE(client.WaitClosed(kDeadline + absl::Seconds(2)));
  EXPECT_GE(absl::Now() - answered, kDeadline - absl::Milliseconds(100));
  EXPECT_TRUE(absl::StartsWith(client.received(), "HTTP/1.1 200"));
}

}  // namespace
}  // namespace tailgate::server
