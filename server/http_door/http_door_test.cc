// The HTTP door in-process: the real HttpDoor, served on a FakeLoopEngine's
// loop, driven over loopback by libcurl (and by raw sockets where a client
// must misbehave: leave, or stop reading). The engine's side of every read
// is the test's: it sees what the door submitted and answers, fails or
// waits for the door to cancel it.

#include "server/http_door/http_door.h"

#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/read/drain.h"
#include "server/read/read_call.h"
#include "server/read/rejections.h"
#include "server/read/response_memory.h"
#include "server/testing/door_harness.h"
#include "server/testing/fake_loop_engine.h"

namespace tailgate::server::http_door {
namespace {

using ::tailgate::server::testing::ConnectToLoopback;
using ::tailgate::server::testing::DoorHarness;
using ::tailgate::server::testing::FakeLoopEngine;
using ::tailgate::server::testing::SendAll;

constexpr absl::Duration kWait = DoorHarness::kWait;

// What curl got.
struct Reply {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The value of header `name` (any case); nullopt if absent.
  std::optional<std::string> Header(absl::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (absl::EqualsIgnoreCase(key, name)) return value;
    }
    return std::nullopt;
  }
};

size_t OnBody(char* data, size_t size, size_t n, void* arg) {
  static_cast<Reply*>(arg)->body.append(data, size * n);
  return size * n;
}

size_t OnHeader(char* data, size_t size, size_t n, void* arg) {
  absl::string_view line(data, size * n);
  const size_t colon = line.find(':');
  if (colon != absl::string_view::npos) {
    absl::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) {
      value.remove_suffix(1);
    }
    static_cast<Reply*>(arg)->headers.emplace_back(
        std::string(line.substr(0, colon)), std::string(value));
  }
  return size * n;
}

// One blocking request through libcurl (its own connection).
Reply Fetch(int port, const std::string& target,
            const std::vector<std::string>& headers = {}, bool head = false) {
  Reply reply;
  CURL* curl = curl_easy_init();
  const std::string url = absl::StrCat("http://127.0.0.1:", port, target);
  curl_slist* list = nullptr;
  for (const std::string& header : headers) {
    list = curl_slist_append(list, header.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_NOBODY, head ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &reply);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(kWait)));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  reply.code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  return reply;
}

std::future<Reply> FetchAsync(int port, std::string target,
                              std::vector<std::string> headers = {}) {
  return std::async(std::launch::async,
                    [=] { return Fetch(port, target, headers); });
}

// Everything the peer sends until it closes (or resets) the connection.
std::string ReadToEnd(int fd) {
  std::string all;
  char buffer[1 << 16];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
    all.append(buffer, static_cast<size_t>(n));
  }
  return all;
}

// Sends `bytes` on a connection of its own; returns everything the door
// answers until it closes the connection, or until kWait passes.
std::string SendAndReadToEnd(int port, absl::string_view bytes) {
  const int fd = ConnectToLoopback(port);
  if (fd < 0) return "<no connection>";
  const timeval wait = absl::ToTimeval(kWait);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  std::string got = SendAll(fd, bytes) ? ReadToEnd(fd) : "<send failed>";
  close(fd);
  return got;
}

// "GET `target`" with `headers` (each "Name: value"), as raw bytes.
std::string RawGet(absl::string_view target, absl::string_view headers = "") {
  return absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: x\r\n", headers,
                      "\r\n");
}

class HttpDoorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { curl_global_init(CURL_GLOBAL_DEFAULT); }

  // Starts the engine, the core and the door; `max_calls` and `max_bytes`
  // are the core's --max_requests and --max_buffered_bytes.
  void Start(int64_t max_calls = 64, int64_t max_bytes = 1 << 20,
             HttpDoorOptions options = {}) {
    ASSERT_TRUE(harness_.Start(max_calls, max_bytes, absl::Seconds(5)).ok());
    engine_ = &harness_.engine();
    memory_ = &harness_.memory();
    absl::StatusOr<ListenAddress> address = ParseListenAddress("127.0.0.1:0");
    ASSERT_TRUE(address.ok()) << address.status();
    options.address = *address;
    absl::StatusOr<std::unique_ptr<HttpDoor>> door =
        HttpDoor::Start(options, harness_.core(), harness_.engine());
    ASSERT_TRUE(door.ok()) << door.status();
    door_ = *std::move(door);
    port_ = door_->address().port;
  }

  void TearDown() override {
    door_.reset();
    harness_.Stop();
  }

  FakeLoopEngine::Submitted Read(size_t index) { return harness_.Read(index); }
  bool WaitForNoCalls() { return harness_.WaitForNoCalls(); }

  DoorHarness harness_;
  FakeLoopEngine* engine_ = nullptr;
  ResponseMemory* memory_ = nullptr;
  Rejections& rejections_ = harness_.rejections();
  DrainGate& gate_ = harness_.gate();
  std::unique_ptr<HttpDoor> door_;
  int port_ = 0;
};

TEST_F(HttpDoorTest, AnswersAReadWithStatusBodyAndHeadersMapped) {
  Start();
  std::future<Reply> reply = FetchAsync(
      port_, "/item?id=7", {"Accept: text/plain", "Tailgate-Tenant: blue"});

  FakeLoopEngine::Submitted read = Read(0);
  EXPECT_TRUE(read.on_loop_thread);
  EXPECT_EQ(read.read.target, "/item?id=7");
  EXPECT_FALSE(read.read.head);
  EXPECT_EQ(read.read.tenant, "blue");
  EXPECT_TRUE(std::any_of(read.read.headers.begin(), read.read.headers.end(),
                          [](const hygiene::HttpHeader& header) {
                            return header.name == "Accept" &&
                                   header.value == "text/plain";
                          }));
  hedge::EngineResponse response =
      DoorHarness::Response(203, "hello from a replica");
  response.headers = {{"Content-Type", "text/plain"},
                      {"X-Replica", "r2"},
                      {"Tailgate-Attempts", "9"},  // a replica's, not ours
                      {"Content-Length", "999"}};
  response.trace.attempts = 2;
  response.trace.hedged = true;
  response.trace.hedge_won = true;
  ASSERT_TRUE(engine_->Answer(read.id, std::move(response)));

  const Reply got = reply.get();
  ASSERT_EQ(got.code, CURLE_OK) << curl_easy_strerror(got.code);
  EXPECT_EQ(got.status, 203);
  EXPECT_EQ(got.body, "hello from a replica");
  EXPECT_EQ(got.Header("Content-Type"), "text/plain");
  EXPECT_EQ(got.Header("X-Replica"), "r2");
  EXPECT_EQ(got.Header("Content-Length"), "20");
  EXPECT_EQ(got.Header("Tailgate-Attempts"), "2");
  EXPECT_EQ(got.Header("Tailgate-Hedged"), "true");
  EXPECT_EQ(got.Header("Tailgate-Hedge-Won"), "true");
  EXPECT_TRUE(WaitForNoCalls());
  EXPECT_EQ(memory_->held_bytes(), 0);
}

TEST_F(HttpDoorTest, HeadIsAHeadReadAndKeepsTheReplicasLength) {
  Start();
  std::future<Reply> reply = std::async(std::launch::async, [this] {
    return Fetch(port_, "/big", {}, /*head=*/true);
  });
  FakeLoopEngine::Submitted read = Read(0);
  EXPECT_TRUE(read.read.head);
  hedge::EngineResponse response = DoorHarness::Response(200, "");
  response.headers = {{"Content-Length", "12345"}};
  ASSERT_TRUE(engine_->Answer(read.id, std::move(response)));
  const Reply got = reply.get();
  ASSERT_EQ(got.code, CURLE_OK) << curl_easy_strerror(got.code);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.Header("Content-Length"), "12345");
  EXPECT_EQ(got.body, "");
}

// Each way the engine ends a read, through the door's table
// (http_mapping.h, ReplyForError).
struct FailureCase {
  hedge::ReadFailure failure;
  long status;
  const char* code;  // Tailgate-Error
  bool retry_after;
};

class HttpDoorFailureTest : public HttpDoorTest,
                            public ::testing::WithParamInterface<FailureCase> {
};

TEST_P(HttpDoorFailureTest, MapsTheEnginesFailure) {
  const FailureCase& c = GetParam();
  Start();
  std::future<Reply> reply = FetchAsync(port_, "/item");
  FakeLoopEngine::Submitted read = Read(0);
  ASSERT_TRUE(engine_->Fail(read.id, c.failure, "the engine says no"));
  const Reply got = reply.get();
  ASSERT_EQ(got.code, CURLE_OK) << curl_easy_strerror(got.code);
  EXPECT_EQ(got.status, c.status);
  EXPECT_EQ(got.Header("Tailgate-Error"), c.code);
  EXPECT_EQ(got.Header("Retry-After").has_value(), c.retry_after);
  EXPECT_TRUE(absl::StrContains(got.body, "the engine says no")) << got.body;
}

INSTANTIATE_TEST_SUITE_P(
    Failures, HttpDoorFailureTest,
    ::testing::Values(
        FailureCase{hedge::ReadFailure::kDeadlineExceeded, 504,
                    "DEADLINE_EXCEEDED", false},
        FailureCase{hedge::ReadFailure::kTooLarge, 502, "RESOURCE_EXHAUSTED",
                    false},
        FailureCase{hedge::ReadFailure::kShuttingDown, 503, "UNAVAILABLE",
                    false},
        FailureCase{hedge::ReadFailure::kNoReplica, 502, "UNAVAILABLE", false},
        FailureCase{hedge::ReadFailure::kUpstreamFailure, 502, "UNAVAILABLE",
                    false},
        FailureCase{hedge::ReadFailure::kNoAddress, 503, "UNAVAILABLE", false},
        FailureCase{hedge::ReadFailure::kOverloaded, 503, "RESOURCE_EXHAUSTED",
                    true},
        FailureCase{hedge::ReadFailure::kUnknownUpstream, 404, "NOT_FOUND",
                    false}));

TEST_F(HttpDoorTest, AnEngineRefusalIsAnsweredAndCounted) {
  Start();
  engine_->RefuseWith(hedge::ReadFailureStatus(
      hedge::ReadFailure::kUnknownUpstream, "no replica set \"nope\""));
  const Reply got = Fetch(port_, "/item", {"Tailgate-Upstream: nope"});
  ASSERT_EQ(got.code, CURLE_OK) << curl_easy_strerror(got.code);
  EXPECT_EQ(got.status, 404);
  EXPECT_EQ(got.Header("Tailgate-Error"), "NOT_FOUND");
  ASSERT_EQ(engine_->submitted().size(), 1u);
  EXPECT_EQ(engine_->submitted()[0].read.upstream, "nope");
  EXPECT_EQ(rejections_.Snapshot().unknown_upstream, 1u);
  EXPECT_EQ(memory_->calls(), 0);
}

TEST_F(HttpDoorTest, AMalformedControlNeverReachesTheEngine) {
  Start();
  const Reply got = Fetch(port_, "/item", {"Tailgate-Timeout: soon"});
  ASSERT_EQ(got.code, CURLE_OK) << curl_easy_strerror(got.code);
  EXPECT_EQ(got.status, 400);
  EXPECT_EQ(got.Header("Tailgate-Error"), "INVALID_ARGUMENT");
  EXPECT_TRUE(absl::StrContains(got.body, "Tailgate-Timeout")) << got.body;
  EXPECT_TRUE(engine_->submitted().empty());
  EXPECT_EQ(rejections_.Snapshot().invalid_argument, 1u);
}

TEST_F(HttpDoorTest, TheTimeoutHeaderIsTheReadsDeadline) {
  Start();
  const absl::Time before = engine_->clock().Now();
  std::future<Reply> timed =
      FetchAsync(port_, "/timed", {"Tailgate-Timeout: 2500ms"});
  FakeLoopEngine::Submitted read = Read(0);
  const absl::Time after = engine_->clock().Now();
  // The door maps the wall-clock deadline onto the engine clock: allow
  // for the two clocks' reads not being one instant.
  EXPECT_GE(read.read.deadline, before + absl::Milliseconds(2499));
  EXPECT_LE(read.read.deadline, after + absl::Milliseconds(2501));
  ASSERT_TRUE(engine_->Fail(read.id, hedge::ReadFailure::kDeadlineExceeded,
                            "deadline passed"));
  const Reply got = timed.get();
  EXPECT_EQ(got.status, 504);
  EXPECT_EQ(got.Header("Tailgate-Error"), "DEADLINE_EXCEEDED");

  // Without the header the engine's own --timeout caps the read.
  std::future<Reply> untimed = FetchAsync(port_, "/untimed");
  FakeLoopEngine::Submitted open = Read(1);
  EXPECT_EQ(open.read.deadline, absl::InfiniteFuture());
  ASSERT_TRUE(engine_->Answer(open.id, DoorHarness::Response(200, "ok")));
  EXPECT_EQ(untimed.get().status, 200);
}

TEST_F(HttpDoorTest, AClientThatLeavesCancelsItsRead) {
  Start();
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
  FakeLoopEngine::Submitted read = Read(0);
  close(fd);
  EXPECT_TRUE(engine_->WaitForCancelled(read.id, kWait));
  EXPECT_TRUE(WaitForNoCalls());
  EXPECT_EQ(engine_->pending(), 0u);
}

TEST_F(HttpDoorTest, RefusesTheReadBeyondMaxRequestsAndAdmitsAgainOnceOneEnds) {
  Start(/*max_calls=*/2);
  std::future<Reply> first = FetchAsync(port_, "/1");
  std::future<Reply> second = FetchAsync(port_, "/2");
  // The two clients race: find each one's read by its target.
  FakeLoopEngine::Submitted read1 = Read(0);
  FakeLoopEngine::Submitted read2 = Read(1);
  if (read1.read.target != "/1") std::swap(read1, read2);
  EXPECT_EQ(read1.read.target, "/1");

  const Reply refused = Fetch(port_, "/3");
  ASSERT_EQ(refused.code, CURLE_OK) << curl_easy_strerror(refused.code);
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.Header("Tailgate-Error"), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(refused.Header("Retry-After"), "1");
  EXPECT_EQ(engine_->submitted().size(), 2u);
  EXPECT_EQ(rejections_.Snapshot().too_many_calls, 1u);

  ASSERT_TRUE(engine_->Answer(read1.id, DoorHarness::Response(200, "one")));
  EXPECT_EQ(first.get().body, "one");
  std::future<Reply> fourth = FetchAsync(port_, "/4");
  FakeLoopEngine::Submitted read4 = Read(2);
  EXPECT_EQ(read4.read.target, "/4");
  ASSERT_TRUE(engine_->Answer(read2.id, DoorHarness::Response(200, "two")));
  ASSERT_TRUE(engine_->Answer(read4.id, DoorHarness::Response(200, "four")));
  EXPECT_EQ(second.get().body, "two");
  EXPECT_EQ(fourth.get().body, "four");
}

TEST_F(HttpDoorTest, AnAnswerOverTheBufferedBytesIsDropped) {
  Start(/*max_calls=*/64, /*max_bytes=*/4096);
  std::future<Reply> reply = FetchAsync(port_, "/big");
  FakeLoopEngine::Submitted read = Read(0);
  ASSERT_TRUE(engine_->Answer(
      read.id, DoorHarness::Response(200, std::string(8192, 'x'))));
  const Reply got = reply.get();
  EXPECT_EQ(got.status, 503);
  EXPECT_EQ(got.Header("Tailgate-Error"), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(rejections_.Snapshot().dropped_buffer_full, 1u);
}

TEST_F(HttpDoorTest, DrainingRefusesNewReadsAndFinishesThoseInFlight) {
  Start();
  std::future<Reply> in_flight = FetchAsync(port_, "/before");
  FakeLoopEngine::Submitted read = Read(0);
  gate_.StartDrain();

  const Reply refused = Fetch(port_, "/after");
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.Header("Tailgate-Error"), "UNAVAILABLE");
  EXPECT_EQ(engine_->submitted().size(), 1u);
  EXPECT_EQ(rejections_.Snapshot().draining, 1u);

  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "finished")));
  const Reply got = in_flight.get();
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, "finished");
  EXPECT_EQ(got.Header("Connection"), "close");
  // Every call is over (its slot given back). Not gate_.WaitForIdle: the
  // system abseil's Mutex behind it is invisible to ThreadSanitizer.
  EXPECT_TRUE(WaitForNoCalls());
}

TEST_F(HttpDoorTest, StoppingCancelsReadsInFlightAndAnswersShuttingDown) {
  Start();
  std::future<Reply> in_flight = FetchAsync(port_, "/slow");
  FakeLoopEngine::Submitted read = Read(0);
  door_.reset();  // waits for the engine to complete the read
  EXPECT_EQ(engine_->cancelled(), std::vector<uint64_t>{read.id});
  const Reply got = in_flight.get();
  EXPECT_EQ(got.status, 503);
  EXPECT_EQ(got.Header("Tailgate-Error"), "UNAVAILABLE");
  EXPECT_TRUE(absl::StrContains(got.body, "shutting down")) << got.body;
  EXPECT_EQ(memory_->calls(), 0);
  // Nothing listens any more.
  EXPECT_EQ(ConnectToLoopback(port_), -1);
}

TEST_F(HttpDoorTest, ANulInAHeaderValueIsRefusedNamingTheHeader) {
  Start();
  const std::string nul(1, '\0');
  for (const std::string& value :
       {absl::StrCat("ab", nul, "cd"), absl::StrCat(nul, "cd"),
        absl::StrCat("ab", nul), absl::StrCat("ab", nul, nul, "cd")}) {
    const std::string got = SendAndReadToEnd(
        port_, RawGet("/x", absl::StrCat("X-Trace: ", value, "\r\n")));
    EXPECT_TRUE(absl::StartsWith(got, "HTTP/1.1 400")) << got;
    EXPECT_TRUE(absl::StrContains(got, "Tailgate-Error: INVALID_ARGUMENT"))
        << got;
    EXPECT_TRUE(absl::StrContains(got, "header \"X-Trace\" contains NUL"))
        << got;
  }
  EXPECT_TRUE(engine_->submitted().empty());
  EXPECT_EQ(rejections_.Snapshot().invalid_argument, 4u);
}

TEST_F(HttpDoorTest, ANulOutsideAHeaderValueIsRefused) {
  Start();
  const std::string nul(1, '\0');
  for (const std::string& request :
       {RawGet("/x", absl::StrCat("X-Tr", nul, "ace: v\r\n")),
        RawGet("/x", absl::StrCat("X-A: v\r\n ", nul, "folded\r\n")),
        absl::StrCat("GET /x HTTP/1.1", nul, "\r\nHost: x\r\n\r\n")}) {
    const std::string got = SendAndReadToEnd(port_, request);
    // evhttp refuses some of these itself, some reach the door.
    EXPECT_TRUE(absl::StartsWith(got, "HTTP/1.1 400")) << got;
  }
  EXPECT_TRUE(engine_->submitted().empty());
}

// A NUL sent after a request, while its read is in flight or once it is
// answered, refuses the request it is in, not the one before.
TEST_F(HttpDoorTest, ANulAfterARequestRefusesOnlyTheNextRequest) {
  Start();
  const int fd = ConnectToLoopback(port_);
  ASSERT_GE(fd, 0);
  const timeval wait = absl::ToTimeval(kWait);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  ASSERT_TRUE(SendAll(fd, RawGet("/first")));
  FakeLoopEngine::Submitted read = Read(0);
  ASSERT_TRUE(SendAll(
      fd, RawGet("/second",
                 absl::StrCat("X-A: a", std::string(1, '\0'), "b\r\n"))));
  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "first")));
  const std::string got = ReadToEnd(fd);
  close(fd);
  EXPECT_TRUE(absl::StartsWith(got, "HTTP/1.1 200")) << got;
  const size_t second = got.find("HTTP/1.1 400");
  ASSERT_NE(second, std::string::npos) << got;
  EXPECT_TRUE(
      absl::StrContains(got.substr(second), "header \"X-A\" contains NUL"))
      << got;
  EXPECT_EQ(engine_->submitted().size(), 1u);
}

TEST_F(HttpDoorTest, DotSegmentsAreRefusedWith400NamingThePath) {
  Start();
  for (const absl::string_view target :
       {"/../victim", "/%2e%2e/victim", "/a/.%2E/../victim", "/a%2F..%2Fb"}) {
    const std::string got = SendAndReadToEnd(port_, RawGet(target));
    EXPECT_TRUE(absl::StartsWith(got, "HTTP/1.1 400")) << got;
    EXPECT_TRUE(absl::StrContains(
        got, absl::StrCat("path \"", target, "\" has the dot segment ")))
        << got;
  }
  EXPECT_TRUE(engine_->submitted().empty());
  // Dots in a name or in the query are not dot segments.
  std::future<Reply> allowed = FetchAsync(port_, "/...?next=../x");
  FakeLoopEngine::Submitted read = Read(0);
  EXPECT_EQ(read.read.target, "/...?next=../x");
  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "ok")));
  EXPECT_EQ(allowed.get().status, 200);
}

// Reads from `fd` until `text` has arrived (true), the peer closes, or
// kWait passes.
bool ReadUntil(int fd, absl::string_view text, std::string& got) {
  const timeval wait = absl::ToTimeval(kWait);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  char buffer[4096];
  while (!absl::StrContains(got, text)) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) return false;
    got.append(buffer, static_cast<size_t>(n));
  }
  return true;
}

// True when the peer has closed `fd` (within kWait).
bool Closed(int fd) {
  std::string ignored;
  return !ReadUntil(fd, "never sent", ignored);
}

// A connection that has had one read answered: it waits for its next
// request.
int AnsweredConnection(int port, FakeLoopEngine& engine,
                       DoorHarness& harness, size_t index) {
  const int fd = ConnectToLoopback(port);
  if (fd < 0 || !SendAll(fd, RawGet("/first"))) return -1;
  FakeLoopEngine::Submitted read = harness.Read(index);
  if (!engine.Answer(read.id, DoorHarness::Response(200, "ok"))) return -1;
  std::string got;
  return ReadUntil(fd, "\r\n\r\nok", got) ? fd : -1;
}

TEST_F(HttpDoorTest, AtTheLimitTheConnectionWaitingLongestMakesRoom) {
  HttpDoorOptions options;
  options.max_connections = 2;
  options.header_timeout = absl::Seconds(60);
  uint64_t idle_closed = 0;
  options.idle_closed = [&idle_closed](uint64_t n) { idle_closed = n; };
  Start(64, 1 << 20, options);
  const int oldest = AnsweredConnection(port_, *engine_, harness_, 0);
  const int newer = AnsweredConnection(port_, *engine_, harness_, 1);
  ASSERT_GE(oldest, 0);
  ASSERT_GE(newer, 0);
  // A third client is served; the connection waiting longest gave way.
  std::future<Reply> third = FetchAsync(port_, "/third");
  FakeLoopEngine::Submitted read = Read(2);
  ASSERT_TRUE(engine_->Answer(read.id, DoorHarness::Response(200, "three")));
  EXPECT_EQ(third.get().body, "three");
  EXPECT_TRUE(Closed(oldest));
  // The newer one is still served.
  ASSERT_TRUE(SendAll(newer, RawGet("/again")));
  FakeLoopEngine::Submitted again = Read(3);
  ASSERT_TRUE(engine_->Answer(again.id, DoorHarness::Response(200, "again")));
  std::string got;
  EXPECT_TRUE(ReadUntil(newer, "again", got)) << got;
  close(oldest);
  close(newer);
  EXPECT_EQ(idle_closed, 1u);
}

TEST_F(HttpDoorTest, AtTheLimitWithAReadOnEveryConnectionTheNewOneIsClosed) {
  HttpDoorOptions options;
  options.max_connections = 2;
  uint64_t refused = 0;
  options.refused = [&refused](uint64_t n) { refused = n; };
  Start(64, 1 << 20, options);
  std::future<Reply> first = FetchAsync(port_, "/one");
  FakeLoopEngine::Submitted one = Read(0);
  std::future<Reply> second = FetchAsync(port_, "/two");
  FakeLoopEngine::Submitted two = Read(1);
  const std::string got = SendAndReadToEnd(port_, RawGet("/three"));
  EXPECT_TRUE(got.empty() || absl::StartsWith(got, "HTTP/1.1 503")) << got;
  ASSERT_TRUE(engine_->Answer(one.id, DoorHarness::Response(200, "1")));
  ASSERT_TRUE(engine_->Answer(two.id, DoorHarness::Response(200, "2")));
  EXPECT_EQ(first.get().body, "1");
  EXPECT_EQ(second.get().body, "2");
  EXPECT_EQ(refused, 1u);
  // Accepting resumed once the refused one closed.
  std::future<Reply> fourth = FetchAsync(port_, "/four");
  FakeLoopEngine::Submitted four = Read(2);
  ASSERT_TRUE(engine_->Answer(four.id, DoorHarness::Response(200, "4")));
  EXPECT_EQ(fourth.get().body, "4");
}

// A client that sends a request and never reads the answer is
// disconnected at the send deadline (from the answer's start, well before
// the header timeout), and the answer's bytes are given back.
TEST_F(HttpDoorTest, AClientThatDoesNotReadItsAnswerIsDisconnected) {
  HttpDoorOptions options;
  options.header_timeout = absl::Seconds(60);
  options.send_timeout = absl::Milliseconds(300);
  constexpr size_t kBody = 16 << 20;  // far beyond both socket buffers
  Start(/*max_calls=*/64, /*max_bytes=*/int64_t{64} << 20, options);
  const int fd = ConnectToLoopback(port_, /*receive_buffer=*/4096);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, "GET /huge HTTP/1.1\r\nHost: x\r\n\r\n"));
  FakeLoopEngine::Submitted read = Read(0);
  ASSERT_TRUE(engine_->Answer(
      read.id, DoorHarness::Response(200, std::string(kBody, 'x'))));
  EXPECT_TRUE(WaitForNoCalls());
  EXPECT_EQ(memory_->held_bytes(), 0);
  const std::string got = ReadToEnd(fd);
  close(fd);
  EXPECT_TRUE(absl::StartsWith(got, "HTTP/1.1 200")) << got.substr(0, 64);
  EXPECT_LT(got.size(), kBody);
}

}  // namespace
}  // namespace tailgate::server::http_door
