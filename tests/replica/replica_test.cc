#include "tests/replica/replica.h"

#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/replica/silent_listener.h"

namespace tailgate::testing {
namespace {

using ::testing::Contains;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Pair;
using ::testing::SizeIs;
using ::testing::StartsWith;
using Fault = ReplicaResponse::Fault;

constexpr absl::Duration kWait = absl::Seconds(5);

// --- A blocking libcurl client --------------------------------------------

struct CurlDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
using CurlHandle = std::unique_ptr<CURL, CurlDeleter>;

CurlHandle NewCurl() {
  static const CURLcode init = curl_global_init(CURL_GLOBAL_DEFAULT);
  EXPECT_EQ(init, CURLE_OK);
  return CurlHandle(curl_easy_init());
}

struct FetchOptions {
  bool head = false;
  absl::Duration timeout = kWait;
  curl_off_t max_file_size = 0;  // 0: no limit
  std::vector<std::string> headers;
};

struct Fetched {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string headers;  // the raw header block as received
  std::string body;
  absl::Duration elapsed;
};

size_t Append(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

Fetched Fetch(CURL* curl, const std::string& url,
              const FetchOptions& options = {}) {
  Fetched fetched;
  curl_slist* headers = nullptr;
  for (const std::string& header : options.headers) {
    headers = curl_slist_append(headers, header.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_NOBODY, options.head ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_HTTPGET, options.head ? 0L : 1L);
  curl_easy_setopt(
      curl, CURLOPT_TIMEOUT_MS,
      static_cast<long>(absl::ToInt64Milliseconds(options.timeout)));
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, options.max_file_size);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &fetched.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &fetched.headers);
  const absl::Time start = absl::Now();
  fetched.code = curl_easy_perform(curl);
  fetched.elapsed = absl::Now() - start;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &fetched.status);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(headers);
  return fetched;
}

Fetched Fetch(const std::string& url, const FetchOptions& options = {}) {
  return Fetch(NewCurl().get(), url, options);
}

// --- A raw TCP client, to see the exact bytes on the wire -----------------

constexpr absl::string_view kRawGet =
    "GET /raw HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

struct RawReply {
  std::string bytes;
  int error = 0;           // errno of a failed read; 0 if none
  bool eof = false;        // the replica closed cleanly (FIN)
  bool timed_out = false;  // still open when the read window ended
};

int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads until EOF, an error, or `window` has passed.
RawReply ReadAll(int fd, absl::Duration window) {
  RawReply reply;
  const absl::Time end = absl::Now() + window;
  char buffer[4096];
  while (true) {
    const absl::Duration left = end - absl::Now();
    pollfd readable = {fd, POLLIN, 0};
    if (left <= absl::ZeroDuration() ||
        poll(&readable, 1, static_cast<int>(absl::ToInt64Milliseconds(left))) ==
            0) {
      reply.timed_out = true;
      return reply;
    }
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n > 0) {
      reply.bytes.append(buffer, n);
    } else {
      reply.eof = n == 0;
      reply.error = n < 0 ? errno : 0;
      return reply;
    }
  }
}

RawReply RawExchange(int port, absl::string_view request,
                     absl::Duration window = kWait) {
  const int fd = ConnectLoopback(port);
  if (fd < 0) return RawReply{"", errno};
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  RawReply reply = ReadAll(fd, window);
  close(fd);
  return reply;
}

// --- Helpers ---------------------------------------------------------------

std::unique_ptr<Replica> StartReplica(Handler handler, int port = 0) {
  ReplicaOptions options;
  options.port = port;
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      Replica::Start(std::move(handler), options);
  EXPECT_TRUE(replica.ok()) << replica.status();
  return replica.ok() ? *std::move(replica) : nullptr;
}

ReplicaResponse Response(absl::string_view body, Fault fault = Fault::kNone) {
  ReplicaResponse response;
  response.body = std::string(body);
  response.fault = fault;
  return response;
}

// --- Normal responses ----------------------------------------------------

TEST(ReplicaTest, AnswersWithStatusHeadersAndBody) {
  ReplicaResponse response = Response("hello");
  response.status = 201;
  response.headers = {{"X-Replica", "one"}};
  std::unique_ptr<Replica> replica = StartReplica(Always(response));
  ASSERT_NE(replica, nullptr);

  const Fetched fetched = Fetch(replica->url() + "/");
  EXPECT_EQ(fetched.code, CURLE_OK);
  EXPECT_EQ(fetched.status, 201);
  EXPECT_EQ(fetched.body, "hello");
  EXPECT_THAT(fetched.headers, HasSubstr("X-Replica: one\r\n"));
  EXPECT_THAT(fetched.headers, HasSubstr("Content-Length: 5\r\n"));
}

TEST(ReplicaTest, RecordsEachRequest) {
  std::unique_ptr<Replica> replica = StartReplica(Always(Response("ok")));
  ASSERT_NE(replica, nullptr);
  CurlHandle curl = NewCurl();

  FetchOptions options;
  options.headers = {"X-Test: first"};
  EXPECT_EQ(Fetch(curl.get(), replica->url() + "/one", options).code, CURLE_OK);
  options.head = true;
  EXPECT_EQ(Fetch(curl.get(), replica->url() + "/two", options).code, CURLE_OK);

  EXPECT_EQ(replica->requests_received(), 2);
  const std::vector<ReplicaRequest> requests = replica->requests();
  ASSERT_THAT(requests, SizeIs(2));
  EXPECT_EQ(requests[0].id, 0);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].uri, "/one");
  EXPECT_THAT(requests[0].headers, Contains(Pair("X-Test", "first")));
  EXPECT_THAT(
      requests[0].headers,
      Contains(Pair("Host", absl::StrCat("127.0.0.1:", replica->port()))));
  EXPECT_EQ(requests[1].id, 1);
  EXPECT_EQ(requests[1].method, "HEAD");
  EXPECT_EQ(requests[1].uri, "/two");
}

TEST(ReplicaTest, CountsRequestsWithoutRecordingThem) {
  ReplicaOptions options;
  options.record_requests = false;
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      Replica::Start(Always(Response("ok")), options);
  ASSERT_TRUE(replica.ok()) << replica.status();

  EXPECT_EQ(Fetch((*replica)->url() + "/").code, CURLE_OK);
  EXPECT_TRUE((*replica)->WaitForRequests(1, kWait));
  EXPECT_EQ((*replica)->requests_received(), 1);
  EXPECT_THAT((*replica)->requests(), IsEmpty());
}

TEST(ReplicaTest, PreservesRequestTargetByteForByte) {
  std::unique_ptr<Replica> replica = StartReplica(Always(Response("ok")));
  ASSERT_NE(replica, nullptr);

  EXPECT_EQ(Fetch(replica->url() + "/a%2Fb?q=1").code, CURLE_OK);
  EXPECT_EQ(Fetch(replica->url() + "/p/%7e/../x%20y?a=%2F&b=c+d").code,
            CURLE_OK);

  const std::vector<ReplicaRequest> requests = replica->requests();
  ASSERT_THAT(requests, SizeIs(2));
  EXPECT_EQ(requests[0].uri, "/a%2Fb?q=1");
  EXPECT_EQ(requests[1].uri, "/p/%7e/../x%20y?a=%2F&b=c+d");
}

TEST(ReplicaTest, HeadGetsTheHeadersOfAGetWithoutTheBody) {
  ReplicaResponse response = Response("twelve bytes");
  response.headers = {{"X-Kind", "head"}};
  std::unique_ptr<Replica> replica = StartReplica(Always(response));
  ASSERT_NE(replica, nullptr);
  CurlHandle curl = NewCurl();

  FetchOptions head;
  head.head = true;
  const Fetched fetched = Fetch(curl.get(), replica->url() + "/", head);
  EXPECT_EQ(fetched.code, CURLE_OK);
  EXPECT_EQ(fetched.status, 200);
  EXPECT_THAT(fetched.body, IsEmpty());
  EXPECT_THAT(fetched.headers, HasSubstr("Content-Length: 12\r\n"));
  EXPECT_THAT(fetched.headers, HasSubstr("X-Kind: head\r\n"));

  // A stray body after the HEAD response would corrupt this one.
  const Fetched get = Fetch(curl.get(), replica->url() + "/");
  EXPECT_EQ(get.code, CURLE_OK);
  EXPECT_EQ(get.body, "twelve bytes");
  EXPECT_EQ(replica->connections_accepted(), 1);
}

TEST(ReplicaTest, ReusesAKeepAliveConnection) {
  std::unique_ptr<Replica> replica = StartReplica(Always(Response("ok")));
  ASSERT_NE(replica, nullptr);
  CurlHandle curl = NewCurl();

  EXPECT_EQ(Fetch(curl.get(), replica->url() + "/1").code, CURLE_OK);
  EXPECT_EQ(Fetch(curl.get(), replica->url() + "/2").code, CURLE_OK);

  EXPECT_EQ(replica->connections_accepted(), 1);
  const std::vector<ReplicaRequest> requests = replica->requests();
  ASSERT_THAT(requests, SizeIs(2));
  EXPECT_EQ(requests[0].connection, requests[1].connection);

  // A second client gets a connection of its own.
  EXPECT_EQ(Fetch(replica->url() + "/3").code, CURLE_OK);
  EXPECT_EQ(replica->connections_accepted(), 2);
  EXPECT_NE(replica->requests()[2].connection, requests[0].connection);
}

TEST(ReplicaTest, CountsOpenConnections) {
  std::unique_ptr<Replica> replica = StartReplica(Always(Response("ok")));
  ASSERT_NE(replica, nullptr);
  CurlHandle first = NewCurl();
  CurlHandle second = NewCurl();

  EXPECT_EQ(Fetch(first.get(), replica->url() + "/").code, CURLE_OK);
  EXPECT_EQ(Fetch(second.get(), replica->url() + "/").code, CURLE_OK);
  EXPECT_TRUE(replica->WaitForOpenConnections(2, kWait));

  first.reset();  // closes its connection
  EXPECT_TRUE(replica->WaitForOpenConnections(1, kWait));
  second.reset();
  EXPECT_TRUE(replica->WaitForOpenConnections(0, kWait));
  EXPECT_EQ(replica->connections_accepted(), 2);
  EXPECT_EQ(replica->client_disconnects_before_response(), 0);
}

TEST(ReplicaTest, CountsAConnectionThatClosesBeforeAnyRequest) {
  std::unique_ptr<Replica> replica = StartReplica(Always(Response("ok")));
  ASSERT_NE(replica, nullptr);

  const int fd = ConnectLoopback(replica->port());
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(replica->WaitForOpenConnections(1, kWait));
  close(fd);
  EXPECT_TRUE(replica->WaitForOpenConnections(0, kWait));
  EXPECT_EQ(replica->connections_accepted(), 1);
  EXPECT_EQ(replica->requests_received(), 0);
}

TEST(ReplicaTest, DelayHoldsBackTheStatusLine) {
  ReplicaResponse response = Response("late");
  response.delay = absl::Milliseconds(100);
  std::unique_ptr<Replica> replica = StartReplica(Always(response));
  ASSERT_NE(replica, nullptr);

  const Fetched fetched = Fetch(replica->url() + "/");
  EXPECT_EQ(fetched.code, CURLE_OK);
  EXPECT_EQ(fetched.body, "late");
  EXPECT_GE(fetched.elapsed, absl::Milliseconds(100));
}

TEST(ReplicaTest, DelaysManyRequestsAtOnce) {
  constexpr int kClients = 16;
  constexpr absl::Duration kDelay = absl::Milliseconds(300);
  ReplicaResponse response = Response("late");
  response.delay = kDelay;
  std::unique_ptr<Replica> replica = StartReplica(Always(response));
  ASSERT_NE(replica, nullptr);

  std::vector<Fetched> fetched(kClients);
  std::vector<std::thread> clients;
  const absl::Time start = absl::Now();
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] { fetched[i] = Fetch(replica->url() + "/"); });
  }
  for (std::thread& client : clients) client.join();
  const absl::Duration elapsed = absl::Now() - start;

  for (const Fetched& one : fetched) {
    EXPECT_EQ(one.code, CURLE_OK);
    EXPECT_GE(one.elapsed, kDelay);
  }
  // One after another they would take kClients * kDelay (4.8 s).
  EXPECT_LT(elapsed, 4 * kDelay);
}

TEST(ReplicaTest, SetHandlerAppliesToLaterRequests) {
  std::unique_ptr<Replica> replica = StartReplica(Always(Response("before")));
  ASSERT_NE(replica, nullptr);
  EXPECT_EQ(Fetch(replica->url() + "/").body, "before");

  replica->SetHandler(
      [](const ReplicaRequest& request) { return Response(request.uri); });
  EXPECT_EQ(Fetch(replica->url() + "/echo").body, "/echo");
}

TEST(ReplicaTest, EmptyHandlerAnswers500) {
  std::unique_ptr<Replica> replica = StartReplica(nullptr);
  ASSERT_NE(replica, nullptr);
  EXPECT_EQ(Fetch(replica->url() + "/").status, 500);
}

TEST(ReplicaTest, AnswersPipelinedRequestsInOrder) {
  std::unique_ptr<Replica> replica =
      StartReplica([](const ReplicaRequest& request) {
        ReplicaResponse response = Response(request.uri);
        response.delay = absl::Milliseconds(20);
        return response;
      });
  ASSERT_NE(replica, nullptr);

  const int fd = ConnectLoopback(replica->port());
  ASSERT_GE(fd, 0);
  const std::string two =
      "GET /first HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /second HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  send(fd, two.data(), two.size(), MSG_NOSIGNAL);
  const RawReply reply = ReadAll(fd, kWait);
  close(fd);

  EXPECT_TRUE(reply.eof);
  const size_t first = reply.bytes.find("\r\n\r\n/first");
  const size_t second = reply.bytes.find("\r\n\r\n/second");
  EXPECT_NE(first, std::string::npos) << reply.bytes;
  EXPECT_NE(second, std::string::npos) << reply.bytes;
  EXPECT_LT(first, second);
}

// --- Faults ----------------------------------------------------------------

TEST(ReplicaFaultTest, HangKeepsTheConnectionUntilTheClientGivesUp) {
  std::unique_ptr<Replica> replica =
      StartReplica(Always(Response("", Fault::kHang)));
  ASSERT_NE(replica, nullptr);

  FetchOptions options;
  options.timeout = absl::Milliseconds(100);
  const Fetched fetched = Fetch(replica->url() + "/", options);
  EXPECT_EQ(fetched.code, CURLE_OPERATION_TIMEDOUT);
  EXPECT_GE(fetched.elapsed, absl::Milliseconds(100));

  EXPECT_TRUE(replica->WaitForDisconnectsBeforeResponse(1, absl::Seconds(2)));
  EXPECT_TRUE(replica->WaitForOpenConnections(0, kWait));
  EXPECT_EQ(replica->client_disconnects_before_response(), 1);
}

TEST(ReplicaFaultTest, ClientLeavingDuringTheDelayCountsAsDisconnect) {
  ReplicaResponse response = Response("too late");
  response.delay = absl::Seconds(30);
  std::unique_ptr<Replica> replica = StartReplica(Always(response));
  ASSERT_NE(replica, nullptr);

  FetchOptions options;
  options.timeout = absl::Milliseconds(100);
  EXPECT_EQ(Fetch(replica->url() + "/", options).code,
            CURLE_OPERATION_TIMEDOUT);
  EXPECT_TRUE(replica->WaitForDisconnectsBeforeResponse(1, absl::Seconds(2)));
  EXPECT_TRUE(replica->WaitForOpenConnections(0, kWait));

  // The abandoned timer is gone; the replica goes on serving.
  replica->SetHandler(Always(Response("ok")));
  EXPECT_EQ(Fetch(replica->url() + "/").body, "ok");
}

TEST(ReplicaFaultTest, DripSendsTheBodyInPiecesAndKeepsTheConnection) {
  ReplicaResponse response = Response("0123456789", Fault::kDrip);
  response.drip_bytes = 3;
  response.drip_interval = absl::Milliseconds(20);
  std::unique_ptr<Replica> replica = StartReplica(Always(response));
  ASSERT_NE(replica, nullptr);
  CurlHandle curl = NewCurl();

  const Fetched fetched = Fetch(curl.get(), replica->url() + "/");
  EXPECT_EQ(fetched.code, CURLE_OK);
  EXPECT_EQ(fetched.body, "0123456789");
  EXPECT_THAT(fetched.headers, HasSubstr("Content-Length: 10\r\n"));
  EXPECT_GE(fetched.elapsed, absl::Milliseconds(4 * 20));  // ceil(10 / 3)

  EXPECT_EQ(Fetch(curl.get(), replica->url() + "/").code, CURLE_OK);
  EXPECT_EQ(replica->connections_accepted(), 1);
  EXPECT_EQ(replica->client_disconnects_before_response(), 0);
}

TEST(ReplicaFaultTest, ClientLeavingMidDripCountsAsDisconnect) {
  ReplicaResponse response = Response(std::string(1000, 'd'), Fault::kDrip);
  response.drip_interval = absl::Milliseconds(5);
  std::unique_ptr<Replica> replica = StartReplica(Always(response));
  ASSERT_NE(replica, nullptr);

  FetchOptions options;
  options.timeout = absl::Milliseconds(100);
  const Fetched fetched = Fetch(replica->url() + "/", options);
  EXPECT_EQ(fetched.code, CURLE_OPERATION_TIMEDOUT);
  EXPECT_THAT(fetched.body, Not(IsEmpty()));
  EXPECT_TRUE(replica->WaitForDisconnectsBeforeResponse(1, absl::Seconds(2)));
  EXPECT_TRUE(replica->WaitForOpenConnections(0, kWait));
}

TEST(ReplicaFaultTest, StallAfterStatusSendsTheHeadersOnly) {
  std::unique_ptr<Replica> replica =
      StartReplica(Always(Response("hello", Fault::kStallAfterStatus)));
  ASSERT_NE(replica, nullptr);

  FetchOptions options;
  options.timeout = absl::Milliseconds(150);
  const Fetched fetched = Fetch(replica->url() + "/", options);
  EXPECT_EQ(fetched.code, CURLE_OPERATION_TIMEDOUT);
  EXPECT_EQ(fetched.status, 200);
  EXPECT_THAT(fetched.body, IsEmpty());
  EXPECT_TRUE(replica->WaitForDisconnectsBeforeResponse(1, absl::Seconds(2)));

  const RawReply raw =
      RawExchange(replica->port(), kRawGet, absl::Milliseconds(150));
  EXPECT_TRUE(raw.timed_out);
  EXPECT_THAT(raw.bytes, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(raw.bytes, HasSubstr("Content-Length: 5\r\n"));
  EXPECT_THAT(raw.bytes, EndsWith("\r\n\r\n"));
}

TEST(ReplicaFaultTest, HugeContentLengthTripsTheClientsSizeLimit) {
  std::unique_ptr<Replica> replica =
      StartReplica(Always(Response("abc", Fault::kHugeContentLength)));
  ASSERT_NE(replica, nullptr);

  FetchOptions options;
  options.max_file_size = 1 << 20;
  EXPECT_EQ(Fetch(replica->url() + "/", options).code, CURLE_FILESIZE_EXCEEDED);

  const RawReply raw =
      RawExchange(replica->port(), kRawGet, absl::Milliseconds(150));
  EXPECT_TRUE(raw.timed_out);
  EXPECT_THAT(raw.bytes, HasSubstr("Content-Length: 1000000000000\r\n"));
  EXPECT_THAT(raw.bytes, EndsWith("\r\n\r\nabc"));
  EXPECT_TRUE(replica->WaitForDisconnectsBeforeResponse(2, absl::Seconds(2)));
}

TEST(ReplicaFaultTest, EndlessChunkedNeverSendsTheLastChunk) {
  ReplicaResponse response = Response("", Fault::kEndlessChunked);
  response.drip_interval = absl::Milliseconds(2);
  std::unique_ptr<Replica> replica = StartReplica(Always(response));
  ASSERT_NE(replica, nullptr);

  FetchOptions options;
  options.timeout = absl::Milliseconds(150);
  const Fetched fetched = Fetch(replica->url() + "/", options);
  EXPECT_EQ(fetched.code, CURLE_OPERATION_TIMEDOUT);
  EXPECT_THAT(fetched.body, Not(IsEmpty()));
  EXPECT_THAT(fetched.body, ::testing::Each('x'));
  EXPECT_TRUE(replica->WaitForDisconnectsBeforeResponse(1, absl::Seconds(2)));

  const RawReply raw =
      RawExchange(replica->port(), kRawGet, absl::Milliseconds(100));
  EXPECT_TRUE(raw.timed_out);
  EXPECT_THAT(raw.bytes, HasSubstr("Transfer-Encoding: chunked\r\n"));
  EXPECT_THAT(raw.bytes, HasSubstr("\r\n\r\n1\r\nx\r\n1\r\nx\r\n"));
  EXPECT_THAT(raw.bytes, Not(HasSubstr("\r\n0\r\n")));
}

TEST(ReplicaFaultTest, CloseMidBodyGivesAPartialFile) {
  std::unique_ptr<Replica> replica =
      StartReplica(Always(Response("0123456789", Fault::kCloseMidBody)));
  ASSERT_NE(replica, nullptr);

  const Fetched fetched = Fetch(replica->url() + "/");
  EXPECT_EQ(fetched.code, CURLE_PARTIAL_FILE);
  EXPECT_EQ(fetched.body, "01234");

  const RawReply raw = RawExchange(replica->port(), kRawGet);
  EXPECT_TRUE(raw.eof);
  EXPECT_EQ(raw.bytes, "HTTP/1.1 200 Fault\r\nContent-Length: 10\r\n\r\n01234");
  EXPECT_TRUE(replica->WaitForOpenConnections(0, kWait));
  EXPECT_EQ(replica->client_disconnects_before_response(), 0);
}

TEST(ReplicaFaultTest, MalformedStatusLineIsRejectedByCurl) {
  std::unique_ptr<Replica> replica =
      StartReplica(Always(Response("", Fault::kMalformedStatus)));
  ASSERT_NE(replica, nullptr);

  // curl 7.88 reports a bad status line as "Unsupported HTTP version".
  EXPECT_EQ(Fetch(replica->url() + "/").code, CURLE_UNSUPPORTED_PROTOCOL);

  const RawReply raw = RawExchange(replica->port(), kRawGet);
  EXPECT_TRUE(raw.eof);
  EXPECT_EQ(raw.bytes, "HTTP/1.1 abc\r\n\r\n");
  EXPECT_EQ(replica->client_disconnects_before_response(), 0);
}

TEST(ReplicaFaultTest, MalformedHeadersAreRejectedByCurl) {
  std::unique_ptr<Replica> replica =
      StartReplica(Always(Response("body", Fault::kMalformedHeaders)));
  ASSERT_NE(replica, nullptr);

  EXPECT_EQ(Fetch(replica->url() + "/").code, CURLE_WEIRD_SERVER_REPLY);

  const RawReply raw = RawExchange(replica->port(), kRawGet);
  EXPECT_TRUE(raw.eof);
  EXPECT_EQ(raw.bytes,
            "HTTP/1.1 200 Fault\r\nContent-Length: 4\r\n"
            "this header line has no colon\r\n\r\nbody");
}

TEST(ReplicaFaultTest, ResetAtOnceSendsABareRst) {
  std::unique_ptr<Replica> replica =
      StartReplica(Always(Response("never", Fault::kResetAtOnce)));
  ASSERT_NE(replica, nullptr);

  EXPECT_EQ(Fetch(replica->url() + "/").code, CURLE_RECV_ERROR);

  // No FIN first: the very first read fails with ECONNRESET.
  const RawReply raw = RawExchange(replica->port(), kRawGet);
  EXPECT_THAT(raw.bytes, IsEmpty());
  EXPECT_FALSE(raw.eof);
  EXPECT_EQ(raw.error, ECONNRESET);
  EXPECT_TRUE(replica->WaitForOpenConnections(0, kWait));
  EXPECT_EQ(replica->client_disconnects_before_response(), 0);
}

TEST(ReplicaFaultTest, DelayComesBeforeTheFault) {
  ReplicaResponse response = Response("", Fault::kResetAtOnce);
  response.delay = absl::Milliseconds(100);
  std::unique_ptr<Replica> replica = StartReplica(Always(response));
  ASSERT_NE(replica, nullptr);

  const Fetched fetched = Fetch(replica->url() + "/");
  EXPECT_EQ(fetched.code, CURLE_RECV_ERROR);
  EXPECT_GE(fetched.elapsed, absl::Milliseconds(100));
}

TEST(ReplicaFaultTest, HeadCompletesDespiteABodyFault) {
  std::unique_ptr<Replica> replica =
      StartReplica(Always(Response("hello", Fault::kStallAfterStatus)));
  ASSERT_NE(replica, nullptr);
  CurlHandle curl = NewCurl();

  FetchOptions head;
  head.head = true;
  for (int i = 0; i < 2; ++i) {
    const Fetched fetched = Fetch(curl.get(), replica->url() + "/", head);
    EXPECT_EQ(fetched.code, CURLE_OK);
    EXPECT_EQ(fetched.status, 200);
    EXPECT_THAT(fetched.headers, HasSubstr("Content-Length: 5\r\n"));
  }
  EXPECT_EQ(replica->connections_accepted(), 1);
}

// --- Lifecycle -------------------------------------------------------------

TEST(ReplicaLifecycleTest, RestartsOnTheSamePort) {
  std::unique_ptr<Replica> replica = StartReplica(Always(Response("first")));
  ASSERT_NE(replica, nullptr);
  const int port = replica->port();
  EXPECT_EQ(Fetch(replica->url() + "/").body, "first");
  replica.reset();
  EXPECT_EQ(Fetch(absl::StrCat("http://127.0.0.1:", port, "/")).code,
            CURLE_COULDNT_CONNECT);

  replica = StartReplica(Always(Response("second")), port);
  ASSERT_NE(replica, nullptr);
  EXPECT_EQ(replica->port(), port);
  EXPECT_EQ(Fetch(replica->url() + "/").body, "second");
}

TEST(ReplicaLifecycleTest, StartFailsOnAPortInUse) {
  std::unique_ptr<Replica> replica = StartReplica(Always(Response("ok")));
  ASSERT_NE(replica, nullptr);
  ReplicaOptions same_port;
  same_port.port = replica->port();
  absl::StatusOr<std::unique_ptr<Replica>> second =
      Replica::Start(Always(Response("ok")), same_port);
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

TEST(ReplicaLifecycleTest, StartRejectsABadPort) {
  ReplicaOptions options;
  options.port = 70000;
  EXPECT_EQ(Replica::Start(Always(Response("ok")), options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ReplicaLifecycleTest, DestroyingClosesPendingRequests) {
  std::unique_ptr<Replica> replica =
      StartReplica(Always(Response("", Fault::kHang)));
  ASSERT_NE(replica, nullptr);

  Fetched fetched;
  std::thread client([&] { fetched = Fetch(replica->url() + "/"); });
  EXPECT_TRUE(replica->WaitForRequests(1, kWait));
  replica.reset();
  client.join();
  EXPECT_EQ(fetched.code, CURLE_GOT_NOTHING);
  EXPECT_LT(fetched.elapsed, kWait);
}

// --- SilentListener and UnusedLoopbackPort --------------------------------

TEST(SilentListenerTest, AcceptsAndNeverAnswers) {
  absl::StatusOr<std::unique_ptr<SilentListener>> listener =
      SilentListener::Start();
  ASSERT_TRUE(listener.ok()) << listener.status();

  FetchOptions options;
  options.timeout = absl::Milliseconds(100);
  const Fetched fetched = Fetch((*listener)->url() + "/", options);
  EXPECT_EQ(fetched.code, CURLE_OPERATION_TIMEDOUT);
  EXPECT_TRUE((*listener)->WaitForConnections(1, kWait));
  EXPECT_EQ((*listener)->connections_accepted(), 1);
}

TEST(UnusedLoopbackPortTest, RefusesConnections) {
  absl::StatusOr<int> port = UnusedLoopbackPort();
  ASSERT_TRUE(port.ok()) << port.status();
  EXPECT_GT(*port, 0);
  EXPECT_EQ(Fetch(absl::StrCat("http://127.0.0.1:", *port, "/")).code,
            CURLE_COULDNT_CONNECT);
}

TEST(RefusingLoopbackPortTest, RefusesAndCannotBeTaken) {
  absl::StatusOr<int> port = RefusingLoopbackPort();
  ASSERT_TRUE(port.ok()) << port.status();
  EXPECT_EQ(Fetch(absl::StrCat("http://127.0.0.1:", *port, "/")).code,
            CURLE_COULDNT_CONNECT);
  ReplicaOptions options;
  options.port = *port;
  EXPECT_FALSE(Replica::Start(Always(ReplicaResponse()), options).ok())
      << "port " << *port << " was free to bind";
  absl::StatusOr<int> other = RefusingLoopbackPort();
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(*other, *port);
}

}  // namespace
}  // namespace tailgate::testing
