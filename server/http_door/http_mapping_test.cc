#include "server/http_door/http_mapping.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::server::http_door {
namespace {

using ::testing::HasSubstr;

HttpRequestIn Get(std::string target,
                  std::vector<hygiene::HttpHeader> headers = {}) {
  HttpRequestIn in;
  in.target = std::move(target);
  in.headers = std::move(headers);
  return in;
}

std::string HeaderValue(const HttpReply& reply, const std::string& name) {
  for (const hygiene::HttpHeader& header : reply.headers) {
    if (header.name == name) return header.value;
  }
  return "<absent>";
}

TEST(ReadFromHttpTest, TargetMethodAndForwardedHeaders) {
  HttpRequestIn in = Get("/a/b?x=1", {{"Host", "sidecar"},
                                      {"Accept", "text/plain"},
                                      {"Content-Length", "0"},
                                      {"X-Trace", "7"}});
  in.method = HttpMethod::kHead;
  absl::StatusOr<DoorRead> read = ReadFromHttp(in);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->request.path(), "/a/b?x=1");
  EXPECT_EQ(read->request.method(), v1::METHOD_HEAD);
  // Host and the empty body's length are the sidecar's; the rest goes on.
  ASSERT_EQ(read->request.headers_size(), 2);
  EXPECT_EQ(read->request.headers(0).name(), "Accept");
  EXPECT_EQ(read->request.headers(1).name(), "X-Trace");
  EXPECT_EQ(read->request.upstream(), "");
  EXPECT_FALSE(read->request.has_hedge());
  EXPECT_FALSE(read->timeout.has_value());
}

TEST(ReadFromHttpTest, HopByHopHeadersAreLeftForTheSharedHygiene) {
  // Connection and Keep-Alive are passed into the descriptor, where
  // SanitizeRequestHeaders drops them for both doors alike.
  absl::StatusOr<DoorRead> read =
      ReadFromHttp(Get("/", {{"Connection", "keep-alive"}}));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->request.headers(0).name(), "Connection");
}

TEST(ReadFromHttpTest, ControlHeadersAreTakenAndNotForwarded) {
  absl::StatusOr<DoorRead> read =
      ReadFromHttp(Get("/x", {{"tailgate-upstream", "blue"},
                              {"Tailgate-Tenant", "team-a"},
                              {"Tailgate-Hedge", "15ms"},
                              {"Tailgate-Timeout", "250ms"}}));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->request.headers_size(), 0);
  EXPECT_EQ(read->request.upstream(), "blue");
  EXPECT_EQ(read->request.tenant(), "team-a");
  EXPECT_FALSE(read->request.hedge().disable());
  EXPECT_EQ(read->request.hedge().delay().seconds(), 0);
  EXPECT_EQ(read->request.hedge().delay().nanos(), 15'000'000);
  EXPECT_EQ(read->timeout, absl::Milliseconds(250));
}

TEST(ReadFromHttpTest, HedgeOff) {
  absl::StatusOr<DoorRead> read =
      ReadFromHttp(Get("/x", {{"Tailgate-Hedge", "OFF"}}));
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(read->request.hedge().disable());
}

TEST(ReadFromHttpTest, BadControlValuesNameTheHeader) {
  const std::vector<std::pair<hygiene::HttpHeader, std::string>> cases = {
      {{"Tailgate-Timeout", "soon"}, "Tailgate-Timeout: want a duration"},
      {{"Tailgate-Timeout", "0s"}, "Tailgate-Timeout: must be positive"},
      {{"Tailgate-Timeout", "inf"}, "Tailgate-Timeout: "},
      {{"Tailgate-Hedge", "sometimes"}, "Tailgate-Hedge: want off or"},
      {{"Tailgate-Hedge", "-1ms"}, "Tailgate-Hedge: must be positive"},
      {{"Tailgate-Tenant", "a b"}, "Tailgate-Tenant: want letters, digits"},
      {{"Tailgate-Tenant", "a+b"}, "Tailgate-Tenant: want letters, digits"},
      {{"Tailgate-Tenant", std::string(65, 't')},
       "Tailgate-Tenant: longer than 64 bytes (65)"},
      {{"Tailgate-Tenant", ""}, "Tailgate-Tenant: must not be empty"},
      {{"Tailgate-Timout", "1s"}, "unknown control header Tailgate-Timout"},
  };
  for (const auto& [header, message] : cases) {
    absl::StatusOr<DoorRead> read = ReadFromHttp(Get("/x", {header}));
    ASSERT_FALSE(read.ok()) << header.name << ": " << header.value;
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(read.status().message()), HasSubstr(message));
  }
}

TEST(ReadFromHttpTest, RepeatedControlHeaderIsRefused) {
  absl::StatusOr<DoorRead> read = ReadFromHttp(
      Get("/x", {{"Tailgate-Upstream", "a"}, {"tailgate-upstream", "b"}}));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(), "Tailgate-Upstream: given more than once");
}

TEST(ReadFromHttpTest, BodyFramingIsRefused) {
  const std::vector<std::vector<hygiene::HttpHeader>> cases = {
      {{"Transfer-Encoding", "chunked"}},
      {{"transfer-encoding", "identity"}},
      {{"Content-Length", "5"}},
      {{"Content-Length", "0"}, {"Content-Length", "0"}},
      {{"Content-Length", "0"}, {"Transfer-Encoding", "chunked"}},
      {{"Content-Length", "+0"}},
  };
  for (const auto& headers : cases) {
    absl::StatusOr<DoorRead> read = ReadFromHttp(Get("/x", headers));
    ASSERT_FALSE(read.ok()) << headers[0].name << ": " << headers[0].value;
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(NulRefusalTest, NamesTheHeaderWhoseLineHoldsTheNul) {
  for (const absl::string_view line :
       {"X-Trace:", "X-Trace: ", "X-Trace: abc", "X-Trace:a:b"}) {
    const absl::Status refusal = NulRefusal(line);
    EXPECT_EQ(refusal.code(), absl::StatusCode::kInvalidArgument) << line;
    EXPECT_EQ(refusal.message(), "header \"X-Trace\" contains NUL") << line;
  }
}

TEST(NulRefusalTest, ALineWithoutAHeaderNameIsTheRequestLineOrAName) {
  for (const absl::string_view line :
       {"", "GET /x", "GET http://h:80/x", "X-Tr", " folded: value", "X Y: v",
        ": v"}) {
    const absl::Status refusal = NulRefusal(line);
    EXPECT_EQ(refusal.code(), absl::StatusCode::kInvalidArgument) << line;
    EXPECT_EQ(refusal.message(),
              "the request line or a header name contains NUL")
        << line;
  }
}

TEST(ReplyForResponseTest, WinnerWithTrace) {
  hedge::EngineResponse response;
  response.status = 203;
  response.headers = {{"content-type", "text/plain"},
                      {"content-length", "5"},
                      {"tailgate-error", "INTERNAL"},
                      {"x-replica", "b"}};
  response.body = "hello";
  response.trace.attempts = 2;
  response.trace.hedged = true;
  response.trace.hedge_won = true;
  const HttpReply reply = ReplyForResponse(response, /*head=*/false);
  EXPECT_EQ(reply.status, 203);
  EXPECT_EQ(reply.body, "hello");
  EXPECT_FALSE(reply.close);
  EXPECT_EQ(HeaderValue(reply, "content-type"), "text/plain");
  EXPECT_EQ(HeaderValue(reply, "x-replica"), "b");
  // The server frames the body itself; a replica cannot forge the
  // sidecar's own headers.
  EXPECT_EQ(HeaderValue(reply, "content-length"), "<absent>");
  EXPECT_EQ(HeaderValue(reply, "tailgate-error"), "<absent>");
  EXPECT_EQ(HeaderValue(reply, "Tailgate-Attempts"), "2");
  EXPECT_EQ(HeaderValue(reply, "Tailgate-Hedged"), "true");
  EXPECT_EQ(HeaderValue(reply, "Tailgate-Hedge-Won"), "true");
}

TEST(ReplyForResponseTest, HeadKeepsTheReplicasLength) {
  hedge::EngineResponse response;
  response.status = 200;
  response.headers = {{"content-length", "1234"}};
  response.trace.attempts = 1;
  const HttpReply reply = ReplyForResponse(response, /*head=*/true);
  EXPECT_EQ(HeaderValue(reply, "content-length"), "1234");
  EXPECT_EQ(reply.body, "");
  EXPECT_EQ(HeaderValue(reply, "Tailgate-Hedged"), "false");
  EXPECT_EQ(HeaderValue(reply, "Tailgate-Hedge-Won"), "false");
}

struct ErrorCase {
  ReadEnd end;
  int http_status;
  std::string code_name;
  bool retry_after;
};

// Every ReadEnd, with the reply the table gives it.
TEST(ReplyForErrorTest, StatusTable) {
  const std::vector<ErrorCase> cases = {
      {ReadEnd::kInvalidArgument, 400, "INVALID_ARGUMENT", false},
      {ReadEnd::kDraining, 503, "UNAVAILABLE", false},
      {ReadEnd::kTooManyCalls, 503, "RESOURCE_EXHAUSTED", true},
      {ReadEnd::kBufferFull, 503, "RESOURCE_EXHAUSTED", true},
      {ReadEnd::kUnknownUpstream, 404, "NOT_FOUND", false},
      {ReadEnd::kNoAddress, 503, "UNAVAILABLE", false},
      {ReadEnd::kOverloaded, 503, "RESOURCE_EXHAUSTED", true},
      {ReadEnd::kNoReplica, 502, "UNAVAILABLE", false},
      {ReadEnd::kDeadlineExceeded, 504, "DEADLINE_EXCEEDED", false},
      {ReadEnd::kCancelled, 499, "CANCELLED", false},
      {ReadEnd::kShuttingDown, 503, "UNAVAILABLE", false},
      {ReadEnd::kTooLarge, 502, "RESOURCE_EXHAUSTED", false},
      {ReadEnd::kUpstreamFailure, 502, "UNAVAILABLE", false},
      {ReadEnd::kInternal, 500, "INTERNAL", false},
  };
  for (const ErrorCase& c : cases) {
    const ReadError error = MakeReadError(c.end, "what went wrong");
    const HttpReply reply = ReplyForError(error);
    EXPECT_EQ(reply.status, c.http_status) << error.status;
    EXPECT_EQ(HeaderValue(reply, "Tailgate-Error"), c.code_name)
        << error.status;
    EXPECT_EQ(HeaderValue(reply, "Retry-After"),
              c.retry_after ? "1" : "<absent>")
        << error.status;
    EXPECT_EQ(reply.body, "what went wrong\n");
  }
}

// The reply follows the type, whatever the message says.
TEST(ReplyForErrorTest, MessageDoesNotChangeTheReply) {
  EXPECT_EQ(ReplyForError(
                MakeReadError(ReadEnd::kNoReplica, "tailgate is shutting down"))
                .status,
            502);
  EXPECT_EQ(
      ReplyForError(MakeReadError(ReadEnd::kOverloaded, "max_response_bytes"))
          .status,
      503);
}

TEST(ReplyForErrorTest, BadRequestAndCancelCloseTheConnection) {
  EXPECT_TRUE(
      ReplyForError(MakeReadError(ReadEnd::kInvalidArgument, "x")).close);
  EXPECT_TRUE(ReplyForError(MakeReadError(ReadEnd::kCancelled, "x")).close);
  EXPECT_FALSE(
      ReplyForError(MakeReadError(ReadEnd::kUnknownUpstream, "x")).close);
}

TEST(ReplyForErrorTest, BodyIsOneLine) {
  const HttpReply reply = ReplyForError(
      MakeReadError(ReadEnd::kInvalidArgument, "a\r\nInjected: yes\nb"));
  EXPECT_EQ(reply.body, "a  Injected: yes b\n");
}

TEST(MethodNotAllowedTest, AllowsGetAndHead) {
  const HttpReply reply = MethodNotAllowed();
  EXPECT_EQ(reply.status, 405);
  EXPECT_EQ(HeaderValue(reply, "Allow"), "GET, HEAD");
  EXPECT_EQ(HeaderValue(reply, "Tailgate-Error"), "INVALID_ARGUMENT");
}

}  // namespace
}  // namespace tailgate::server::http_door
