// The plain-HTTP door (--http_listen) through the real binary, against
// loopback replicas, with raw sockets: reads and their Tailgate-* headers,
// HEAD, each error class, hostile request shapes, slow clients, pipelining,
// a client leaving mid-read, the connection limit and the drain.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/e2e/tailgate_e2e_fixture.h"

namespace tailgate::testing {
namespace {

// One HTTP/1.1 answer as read off the wire.
struct Reply {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  std::string Header(absl::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (absl::EqualsIgnoreCase(key, name)) return value;
    }
    return "<absent>";
  }
};

// A blocking client connection to the door.
class Client {
 public:
  explicit Client(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ =
        connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~Client() { Close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }

  bool Send(absl::string_view bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  // The next answer; nullopt if the connection closes first or nothing
  // complete arrives within kWait. `head`: the answer has no body.
  std::optional<Reply> Read(bool head = false) {
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return std::nullopt;
    }
    Reply reply;
    std::vector<std::string> lines =
        absl::StrSplit(buffer_.substr(0, end), "\r\n");
    if (lines.empty() || lines[0].size() < 12 ||
        !absl::SimpleAtoi(lines[0].substr(9, 3), &reply.status)) {
      return std::nullopt;
    }
    for (size_t i = 1; i < lines.size(); ++i) {
      const size_t colon = lines[i].find(':');
      if (colon == std::string::npos) return std::nullopt;
      reply.headers.emplace_back(
          lines[i].substr(0, colon),
          std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1))));
    }
    buffer_.erase(0, end + 4);
    size_t length = 0;
    if (!head && absl::SimpleAtoi(reply.Header("Content-Length"), &length)) {
      while (buffer_.size() < length) {
        if (!Fill()) return std::nullopt;
      }
      reply.body = buffer_.substr(0, length);
      buffer_.erase(0, length);
    }
    return reply;
  }

  // Whether the server closes the connection (EOF or reset) within kWait;
  // bytes that arrive first are kept in `received`.
  bool WaitForClose(std::string* received = nullptr) {
    while (Fill()) {
    }
    if (received != nullptr) *received = buffer_;
    return closed_;
  }

 private:
  // Reads what arrives within kWait; false on EOF, error or timeout.
  bool Fill() {
    pollfd p = {fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(kWait))) <= 0) {
      return false;
    }
    char buf[16384];
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) {
      closed_ = true;
      return false;
    }
    buffer_.append(buf, n);
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
  std::string buffer_;
};

std::string Get(absl::string_view target, absl::string_view headers = "") {
  return absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: sidecar\r\n",
                      headers, "\r\n");
}

class HttpDoorE2eTest : public TailgateE2eTest {
 protected:
  void StartDoor(std::vector<std::string> flags = {}) {
    flags.push_back("--http_listen=127.0.0.1:0");
    StartTailgate(std::move(flags));
    const std::string marker = "event=listening service=http addr=127.0.0.1:";
    std::optional<std::string> line = tailgate_->WaitForLine(marker, kWait);
    ASSERT_TRUE(line.has_value()) << tailgate_->stderr_text();
    const size_t at = line->find(marker) + marker.size();
    ASSERT_TRUE(absl::SimpleAtoi(
        line->substr(at, line->find(' ', at) - at), &port_));
  }

  // One request on a connection of its own.
  std::optional<Reply> Fetch(const std::string& request, bool head = false) {
    Client client(port_);
    EXPECT_TRUE(client.connected());
    EXPECT_TRUE(client.Send(request));
    return client.Read(head);
  }

  int port_ = 0;
};

TEST_F(HttpDoorE2eTest, HedgedReadCarriesTraceHeaders) {
  // The first request anywhere is slow; the hedge, on the other replica,
  // answers at once.
  auto first = std::make_shared<std::atomic<bool>>(true);
  auto handler = [first](const ReplicaRequest& request) {
    ReplicaResponse response = Body("from " + request.uri);
    if (first->exchange(false)) {
      response.body = "slow";
      response.delay = absl::Seconds(3);
    }
    return response;
  };
  Replica& a = AddReplica(handler);
  Replica& b = AddReplica(handler);
  StartDoor({"--hedge_delay=20ms", "--timeout=5s"});

  const std::optional<Reply> reply =
      Fetch(Get("/data?id=7", "X-Trace: abc\r\nTailgate-Tenant: team-a\r\n"
                              "Connection: keep-alive\r\n"));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->body, "from /data?id=7");
  EXPECT_EQ(reply->Header("Tailgate-Attempts"), "2");
  EXPECT_EQ(reply->Header("Tailgate-Hedged"), "true");
  EXPECT_EQ(reply->Header("Tailgate-Hedge-Won"), "true");
  EXPECT_EQ(reply->Header("Content-Length"), "15");

  std::vector<ReplicaRequest> seen = a.requests();
  for (const ReplicaRequest& request : b.requests()) seen.push_back(request);
  ASSERT_EQ(seen.size(), 2u);
  for (const ReplicaRequest& request : seen) {
    EXPECT_EQ(request.method, "GET");
    EXPECT_EQ(request.uri, "/data?id=7");
    bool trace = false;
    for (const auto& [name, value] : request.headers) {
      // Control, Host-of-the-sidecar and hop-by-hop headers stay here.
      EXPECT_FALSE(absl::StartsWithIgnoreCase(name, "Tailgate-")) << name;
      EXPECT_NE(value, "sidecar") << name;
      EXPECT_FALSE(absl::EqualsIgnoreCase(name, "Connection") &&
                   value == "keep-alive");
      trace = trace || (name == "X-Trace" && value == "abc");
    }
    EXPECT_TRUE(trace);
  }
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.requests(), 1u);
  EXPECT_EQ(stats.hedge_wins(), 1u);
  // The read was counted for its tenant, named by Tailgate-Tenant.
  ASSERT_EQ(stats.tenants_size(), 1);
  EXPECT_EQ(stats.tenants(0).name(), "team-a");
  EXPECT_EQ(stats.tenants(0).requests(), 1u);
  EXPECT_EQ(stats.tenants(0).hedge_wins(), 1u);
}

TEST_F(HttpDoorE2eTest, HedgeOffAndHeadAndKeepAlive) {
  Replica& replica = AddReplica(Always(Body("0123456789")));
  StartDoor({"--hedge_delay=1ms"});
  Client client(port_);
  ASSERT_TRUE(client.Send(absl::StrCat(
      "HEAD /h HTTP/1.1\r\nHost: x\r\nTailgate-Hedge: off\r\n\r\n")));
  const std::optional<Reply> head = client.Read(/*head=*/true);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->Header("Content-Length"), "10");
  EXPECT_EQ(head->Header("Tailgate-Attempts"), "1");
  // Same connection: no body bytes came after the HEAD answer.
  ASSERT_TRUE(client.Send(Get("/g", "Tailgate-Hedge: off\r\n")));
  const std::optional<Reply> get = client.Read();
  ASSERT_TRUE(get.has_value());
  EXPECT_EQ(get->status, 200);
  EXPECT_EQ(get->body, "0123456789");
  ASSERT_EQ(replica.requests().size(), 2u);
  EXPECT_EQ(replica.requests()[0].method, "HEAD");
  EXPECT_EQ(replica.requests()[1].method, "GET");
}

TEST_F(HttpDoorE2eTest, PipelinedRequestsAreAnsweredInOrder) {
  AddReplica([](const ReplicaRequest& request) {
    // The first answer is the slower one.
    return Body(request.uri, request.uri == "/a" ? absl::Milliseconds(100)
                                                 : absl::ZeroDuration());
  });
  StartDoor({"--hedge_fraction=0"});
  Client client(port_);
  ASSERT_TRUE(client.Send(Get("/a") + Get("/b") + Get("/c")));
  for (const char* expected : {"/a", "/b", "/c"}) {
    const std::optional<Reply> reply = client.Read();
    ASSERT_TRUE(reply.has_value()) << expected;
    EXPECT_EQ(reply->body, expected);
  }
}

TEST_F(HttpDoorE2eTest, ErrorClasses) {
  AddReplica([](const ReplicaRequest& request) {
    ReplicaResponse response = Body(std::string(100, 'x'));
    if (request.uri == "/hang") response.fault = ReplicaResponse::Fault::kHang;
    if (request.uri == "/reset") {
      response.fault = ReplicaResponse::Fault::kResetAtOnce;
    }
    return response;
  });
  StartDoor({"--hedge_fraction=0", "--max_response_bytes=50",
             "--timeout=300ms", "--failure_threshold=1000"});
  struct Case {
    std::string request;
    int status;
    std::string error;
    std::string body_has;
  };
  const std::vector<Case> cases = {
      {Get("//evil/x"), 400, "INVALID_ARGUMENT", "path"},
      {Get("/x", "Tailgate-Timeout: soon\r\n"), 400, "INVALID_ARGUMENT",
       "Tailgate-Timeout"},
      {Get("/x", "Expect: 100-continue\r\n"), 400, "INVALID_ARGUMENT",
       "Expect"},
      {Get("/x", "Tailgate-Upstream: nowhere\r\n"), 404, "NOT_FOUND",
       "unknown upstream"},
      {Get("/big"), 502, "RESOURCE_EXHAUSTED", "max_response_bytes"},
      {Get("/reset"), 502, "UNAVAILABLE", "every attempt failed"},
      {Get("/hang", "Tailgate-Timeout: 50ms\r\n"), 504, "DEADLINE_EXCEEDED",
       "the caller's deadline"},
      // Capped by --timeout.
      {Get("/hang", "Tailgate-Timeout: 60s\r\n"), 504, "DEADLINE_EXCEEDED",
       "the sidecar's timeout (300ms)"},
      {"DELETE /x HTTP/1.1\r\nHost: x\r\n\r\n", 405, "INVALID_ARGUMENT",
       "method"},
  };
  for (const Case& c : cases) {
    const std::optional<Reply> reply = Fetch(c.request);
    ASSERT_TRUE(reply.has_value()) << c.request;
    EXPECT_EQ(reply->status, c.status) << c.request;
    EXPECT_EQ(reply->Header("Tailgate-Error"), c.error) << c.request;
    EXPECT_TRUE(absl::StrContains(reply->body, c.body_has))
        << c.request << " -> " << reply->body;
    EXPECT_EQ(std::count(reply->body.begin(), reply->body.end(), '\n'), 1);
    if (c.status == 405) {
      EXPECT_EQ(reply->Header("Allow"), "GET, HEAD");
    }
  }
}

TEST_F(HttpDoorE2eTest, ReplicaStatusIsForwardedWithoutTailgateError) {
  ReplicaResponse missing = Body("no such thing");
  missing.status = 404;
  missing.headers = {{"Tailgate-Error", "forged"}};
  AddReplica(Always(missing));
  StartDoor({"--hedge_fraction=0"});
  const std::optional<Reply> reply = Fetch(Get("/missing"));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 404);
  EXPECT_EQ(reply->body, "no such thing");
  EXPECT_EQ(reply->Header("Tailgate-Error"), "<absent>");
  EXPECT_EQ(reply->Header("Tailgate-Attempts"), "1");
}

TEST_F(HttpDoorE2eTest, AdmissionFullIs503WithRetryAfter) {
  ReplicaResponse hang;
  hang.fault = ReplicaResponse::Fault::kHang;
  Replica& replica = AddReplica(Always(hang));
  StartDoor({"--max_requests=1", "--hedge_fraction=0", "--timeout=30s"});
  Client holder(port_);
  ASSERT_TRUE(holder.Send(Get("/hold")));
  ASSERT_TRUE(replica.WaitForRequests(1, kWait));
  const std::optional<Reply> reply = Fetch(Get("/second"));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 503);
  EXPECT_EQ(reply->Header("Tailgate-Error"), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(reply->Header("Retry-After"), "1");
}

TEST_F(HttpDoorE2eTest, ATenantOverItsShareIs503AndOthersAreServed) {
  Replica& replica = AddReplica([](const ReplicaRequest& request) {
    ReplicaResponse response = Body("ok");
    if (request.uri == "/hold") response.fault = ReplicaResponse::Fault::kHang;
    return response;
  });
  StartDoor({"--max_requests=2", "--tenant_share=0.5", "--hedge_fraction=0",
             "--timeout=30s"});
  Client holder(port_);
  ASSERT_TRUE(holder.Send(Get("/hold", "Tailgate-Tenant: a\r\n")));
  ASSERT_TRUE(replica.WaitForRequests(1, kWait));
  const std::optional<Reply> refused =
      Fetch(Get("/x", "Tailgate-Tenant: a\r\n"));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->Header("Tailgate-Error"), "RESOURCE_EXHAUSTED");
  EXPECT_TRUE(absl::StrContains(refused->body, "tenant \"a\""))
      << refused->body;
  const std::optional<Reply> other =
      Fetch(Get("/x", "Tailgate-Tenant: b\r\n"));
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->status, 200);
  const v1::GetStatsResponse stats = Stats();
  ASSERT_EQ(stats.tenants_size(), 2);
  EXPECT_EQ(stats.tenants(0).name(), "a");
  EXPECT_EQ(stats.tenants(0).rejected(), 1u);
  EXPECT_EQ(stats.tenants(0).in_flight(), 1);
  EXPECT_EQ(stats.tenants(1).name(), "b");
  EXPECT_EQ(stats.tenants(1).requests(), 1u);
}

// Requests whose framing or form could smuggle a second request past the
// door, or reach somewhere else: refused, and nothing reaches a replica.
TEST_F(HttpDoorE2eTest, HostileShapesAreRefused) {
  Replica& replica = AddReplica(Always(Body("ok")));
  StartDoor({"--hedge_fraction=0"});
  const std::string smuggled = Get("/smuggled");
  struct Case {
    std::string name;
    std::string bytes;
    int status;  // 0: any 4xx
  };
  const std::vector<Case> cases = {
      {"CL with TE",
       "GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n"
       "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled,
       400},
      {"TE on GET",
       "GET /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
       "0\r\n\r\n" + smuggled,
       400},
      {"TE on HEAD",
       "HEAD /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" +
           smuggled,
       400},
      {"duplicate CL",
       "GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n"
       "Content-Length: " + absl::StrCat(smuggled.size()) + "\r\n\r\n" +
           smuggled,
       400},
      {"body on GET",
       "GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: " +
           absl::StrCat(smuggled.size()) + "\r\n\r\n" + smuggled,
       400},
      {"CL on HEAD",
       "HEAD /x HTTP/1.1\r\nHost: a\r\nContent-Length: " +
           absl::StrCat(smuggled.size()) + "\r\n\r\n" + smuggled,
       400},
      {"absolute-form", "GET http://127.0.0.1:9/x HTTP/1.1\r\nHost: a\r\n\r\n",
       400},
      {"authority-form CONNECT", "CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: a\r\n\r\n",
       405},
      {"authority-form GET", "GET 127.0.0.1:9 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"asterisk", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"control byte in a value", "GET /x HTTP/1.1\r\nX-A: a\x01z\r\n\r\n",
       400},
      {"bare CR in a value", "GET /x HTTP/1.1\r\nX-A: a\rInjected: 1\r\n\r\n",
       400},
      {"NUL in a value",
       absl::StrCat("GET /x HTTP/1.1\r\nHost: a\r\nX-A: a",
                    std::string(1, '\0'), "Injected\r\n\r\n"),
       400},
      {"dot segment", Get("/../x"), 400},
      {"encoded dot segment", Get("/%2e%2E/x"), 400},
      {"target over the hygiene limit",
       Get("/" + std::string(9 * 1024, 'a')), 400},
      {"request line over the header limit",
       Get("/" + std::string(64 * 1024, 'a')), 0},
      {"headers over the header limit",
       Get("/x", "X-Big: " + std::string(64 * 1024, 'b') + "\r\n"), 0},
  };
  for (const Case& c : cases) {
    Client client(port_);
    ASSERT_TRUE(client.connected());
    client.Send(c.bytes);
    const std::optional<Reply> reply =
        client.Read(/*head=*/absl::StartsWith(c.bytes, "HEAD"));
    if (c.status == 0) {
      // evhttp answers 413 or 400 and closes with the rest of the request
      // unread, so the answer may be lost to the reset.
      if (reply.has_value()) {
        EXPECT_GE(reply->status, 400) << c.name;
        EXPECT_LT(reply->status, 500) << c.name;
      }
    } else {
      ASSERT_TRUE(reply.has_value()) << c.name;
      EXPECT_EQ(reply->status, c.status) << c.name << ": " << reply->body;
    }
    // The connection is closed after the refusal: nothing after it is
    // parsed as another request.
    EXPECT_TRUE(client.WaitForClose()) << c.name;
  }
  EXPECT_EQ(replica.requests_received(), 0);
}

// Shapes evhttp accepts and the door lets through, because after parsing
// they are one unambiguous request: the replica gets a request that curl
// writes afresh, with no fold and no bare LF.
TEST_F(HttpDoorE2eTest, ObsFoldAndBareLfAreOneRequest) {
  Replica& replica = AddReplica(Always(Body("ok")));
  StartDoor({"--hedge_fraction=0"});
  {
    Client client(port_);
    client.Send("GET /fold HTTP/1.1\r\nHost: a\r\nX-Fold: one\r\n two\r\n\r\n");
    const std::optional<Reply> reply = client.Read();
    ASSERT_TRUE(reply.has_value());
    EXPECT_TRUE(reply->status == 200 || reply->status == 400) << reply->status;
  }
  {
    Client client(port_);
    client.Send("GET /lf HTTP/1.1\nHost: a\nX-Lf: v\n\n");
    const std::optional<Reply> reply = client.Read();
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(reply->status, 200);
  }
  for (const ReplicaRequest& request : replica.requests()) {
    EXPECT_TRUE(request.uri == "/fold" || request.uri == "/lf") << request.uri;
    for (const auto& [name, value] : request.headers) {
      EXPECT_FALSE(absl::StrContains(value, "\r")) << name;
      EXPECT_FALSE(absl::StrContains(value, "\n")) << name;
      EXPECT_FALSE(absl::StartsWith(name, " ")) << name;
    }
  }
  EXPECT_LE(replica.requests_received(), 2);
}

TEST_F(HttpDoorE2eTest, SlowClientIsDisconnectedAtTheHeaderTimeout) {
  Replica& replica = AddReplica(Always(Body("ok")));
  StartDoor({"--http_header_timeout=300ms"});
  // Idle after connecting.
  Client idle(port_);
  ASSERT_TRUE(idle.connected());
  // A request trickled a byte at a time: evhttp's inactivity timeout alone
  // would never fire. The sleeps pace the client; the assertion is that
  // the door closes the connection before the request could be complete.
  Client trickle(port_);
  const std::string partial = "GET /slow HTTP/1.1\r\nHost: a\r\nX-Slow: ";
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    trickle.Send(partial);
    for (int i = 0; i < 200 && !stop.load(); ++i) {
      if (!trickle.Send("x")) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
  });
  EXPECT_TRUE(idle.WaitForClose());
  std::string received;
  EXPECT_TRUE(trickle.WaitForClose(&received));
  stop = true;
  writer.join();
  EXPECT_EQ(received, "");
  EXPECT_EQ(replica.requests_received(), 0);
}

TEST_F(HttpDoorE2eTest, ClientLeavingMidReadCancelsTheRead) {
  ReplicaResponse hang;
  hang.fault = ReplicaResponse::Fault::kHang;
  Replica& replica = AddReplica(Always(hang));
  StartDoor({"--hedge_fraction=0", "--timeout=30s"});
  {
    Client client(port_);
    ASSERT_TRUE(client.Send(Get("/hang")));
    ASSERT_TRUE(replica.WaitForRequests(1, kWait));
  }  // closed here
  // The attempt is aborted: the replica sees the sidecar's connection go.
  ASSERT_TRUE(replica.WaitForDisconnectsBeforeResponse(1, kWait));
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.cancelled(), 1u);
  EXPECT_EQ(stats.in_flight(), 0u);
}

TEST_F(HttpDoorE2eTest, AtTheLimitTheConnectionWaitingLongestGivesWay) {
  AddReplica(Always(Body("ok")));
  StartDoor({"--http_max_connections=2", "--hedge_fraction=0"});
  Client first(port_), second(port_);
  for (Client* client : {&first, &second}) {
    ASSERT_TRUE(client->Send(Get("/x")));
    const std::optional<Reply> reply = client->Read();
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(reply->status, 200);
  }
  // Both wait for their next request: a third client is served, and the
  // one waiting longest is closed to make room.
  Client third(port_);
  ASSERT_TRUE(third.Send(Get("/third")));
  const std::optional<Reply> served = third.Read();
  ASSERT_TRUE(served.has_value());
  EXPECT_EQ(served->status, 200);
  std::string received;
  EXPECT_TRUE(first.WaitForClose(&received));
  EXPECT_TRUE(received.empty()) << received;
  // The second is still served.
  ASSERT_TRUE(second.Send(Get("/again")));
  const std::optional<Reply> again = second.Read();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->status, 200);
  ASSERT_TRUE(tailgate_
                  ->WaitForLine("event=idle_connections_closed listener=http "
                                "closed=1",
                                kWait)
                  .has_value())
      << tailgate_->stderr_text();
}

TEST_F(HttpDoorE2eTest, DrainFinishesReadsInFlightAndRefusesNewOnes) {
  Replica& replica = AddReplica(Always(Body("done", absl::Seconds(2))));
  StartDoor({"--hedge_fraction=0", "--timeout=4s"});
  Client in_flight(port_);
  ASSERT_TRUE(in_flight.Send(Get("/slow")));
  ASSERT_TRUE(replica.WaitForRequests(1, kWait));
  Client kept_alive(port_);  // connected before the drain

  tailgate_->Signal(SIGTERM);
  ASSERT_TRUE(tailgate_->WaitForLine("event=drain_start", kWait).has_value());
  ASSERT_TRUE(kept_alive.Send(Get("/new")));
  const std::optional<Reply> refused = kept_alive.Read();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->Header("Tailgate-Error"), "UNAVAILABLE");
  EXPECT_EQ(refused->Header("Connection"), "close");

  const std::optional<Reply> done = in_flight.Read();
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->status, 200);
  EXPECT_EQ(done->body, "done");
  EXPECT_EQ(tailgate_->WaitForExit(kWait), 0);
  EXPECT_TRUE(absl::StrContains(tailgate_->stderr_text(),
                                "event=drain_end in_flight=0"))
      << tailgate_->stderr_text();
}

TEST_F(HttpDoorE2eTest, UnixSocket) {
  AddReplica(Always(Body("over unix")));
  // TEST_TMPDIR can be longer than a socket path may be.
  const std::string path = absl::StrCat("/tmp/tailgate_door_", getpid());
  StartTailgate({"--http_listen=unix:" + path, "--hedge_fraction=0"});
  ASSERT_TRUE(tailgate_->WaitForLine("service=http addr=unix:" + path, kWait)
                  .has_value())
      << tailgate_->stderr_text();
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const std::string request = Get("/u", "Connection: close\r\n");
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  std::string answer;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) {
    answer.append(buf, n);
  }
  close(fd);
  unlink(path.c_str());
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 200")) << answer;
  EXPECT_TRUE(absl::EndsWith(answer, "over unix")) << answer;
}

}  // namespace
}  // namespace tailgate::testing
