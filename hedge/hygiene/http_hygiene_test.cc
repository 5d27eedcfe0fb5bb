#include "hedge/hygiene/http_hygiene.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::hygiene {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

MATCHER_P2(Header, name, value, "") {
  return arg.name == name && arg.value == value;
}

std::string RejectPath(absl::string_view path) {
  const absl::Status status = ValidateRequestTarget(path);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << path;
  EXPECT_THAT(std::string(status.message()), StartsWith("path "));
  return std::string(status.message());
}

std::string RejectHeaders(const std::vector<HttpHeader>& headers) {
  absl::StatusOr<std::vector<HttpHeader>> sanitized =
      SanitizeRequestHeaders(headers);
  EXPECT_EQ(sanitized.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(sanitized.status().message());
}

std::vector<HttpHeader> AcceptHeaders(const std::vector<HttpHeader>& headers) {
  absl::StatusOr<std::vector<HttpHeader>> sanitized =
      SanitizeRequestHeaders(headers);
  EXPECT_TRUE(sanitized.ok()) << sanitized.status();
  return sanitized.ok() ? *sanitized : std::vector<HttpHeader>();
}

// ---- ValidateRequestTarget ----

TEST(ValidateRequestTargetTest, AcceptsEscapesAndOddSegmentsAsIs) {
  for (const absl::string_view path :
       {"/", "/a%2Fb?q=1", "/x?x=%00", "/a//b", "/?", "/p?a=1&a=2;b=%20",
        "/~user/!$&'()*+,;=:@", "/a%zz", "/q?next=http://x/y", "/a\\b"}) {
    EXPECT_TRUE(ValidateRequestTarget(path).ok()) << path;
  }
}

// ---- Dot segments ----

// The dot segment named by the refusal of `path`.
std::string RefusedDotSegment(absl::string_view path) {
  const std::string message = RejectPath(path);
  EXPECT_THAT(message,
              StartsWith(absl::StrCat("path \"", absl::CHexEscape(path),
                                      "\" has the dot segment ")))
      << path;
  const size_t start = message.find("dot segment \"");
  if (start == std::string::npos) return "";
  const size_t begin = start + 13;
  return message.substr(begin, message.find('"', begin) - begin);
}

TEST(ValidateRequestTargetTest, RefusesPlainDotSegmentsAnywhereInThePath) {
  EXPECT_EQ(RejectPath("/../victim"),
            "path \"/../victim\" has the dot segment \"..\" at byte 1 (a "
            "replica would resolve it, even above its base path)");
  EXPECT_EQ(RefusedDotSegment("/./x"), ".");
  EXPECT_EQ(RefusedDotSegment("/a/./b"), ".");
  EXPECT_EQ(RefusedDotSegment("/a/b/../../../etc/passwd"), "..");
  EXPECT_EQ(RefusedDotSegment("/."), ".");
  EXPECT_EQ(RefusedDotSegment("/.."), "..");
  EXPECT_EQ(RefusedDotSegment("/a/.."), "..");
  EXPECT_EQ(RefusedDotSegment("/a/."), ".");
  EXPECT_EQ(RefusedDotSegment("/a/..?q=1"), "..");
  EXPECT_EQ(RefusedDotSegment("/a/.?"), ".");
  EXPECT_EQ(RefusedDotSegment("/a//../b"), "..");
}

TEST(ValidateRequestTargetTest, RefusesPercentEncodedDotsInAnyCase) {
  EXPECT_EQ(RejectPath("/%2e%2e/victim"),
            "path \"/%2e%2e/victim\" has the dot segment \"%2e%2e\" at byte "
            "1 (a replica would resolve it, even above its base path)");
  for (const absl::string_view segment :
       {"%2E%2E", "%2E%2e", "%2e%2E", ".%2e", ".%2E", "%2e.", "%2E.", "%2e",
        "%2E"}) {
    EXPECT_EQ(RefusedDotSegment(absl::StrCat("/a/", segment, "/victim")),
              segment);
    EXPECT_EQ(RefusedDotSegment(absl::StrCat("/a/", segment)), segment);
  }
}

TEST(ValidateRequestTargetTest, EncodedSlashesAndBackslashesSeparateSegments) {
  EXPECT_EQ(RefusedDotSegment("/a%2F..%2Fvictim"), "..");
  EXPECT_EQ(RefusedDotSegment("/a%2f..%2fvictim"), "..");
  EXPECT_EQ(RefusedDotSegment("/a%5C..%5Cvictim"), "..");
  EXPECT_EQ(RefusedDotSegment("/a%5c%2e%2e"), "%2e%2e");
  EXPECT_EQ(RefusedDotSegment("/a\\..\\victim"), "..");
  EXPECT_EQ(RefusedDotSegment("/..%2Fvictim"), "..");
  EXPECT_EQ(RefusedDotSegment("/a/.%2F"), ".");
}

TEST(ValidateRequestTargetTest, PathParametersDoNotHideADotSegment) {
  EXPECT_EQ(RefusedDotSegment("/..;/admin"), "..;");
  EXPECT_EQ(RefusedDotSegment("/a/..;x=1/b"), "..;x=1");
  EXPECT_EQ(RefusedDotSegment("/a/.;v"), ".;v");
  EXPECT_EQ(RefusedDotSegment("/a/%2e%2e;/b"), "%2e%2e;");
  EXPECT_TRUE(ValidateRequestTarget("/a;../b").ok());
  EXPECT_TRUE(ValidateRequestTarget("/a/;/b").ok());
}

TEST(ValidateRequestTargetTest, NamesWithDotsAndDotsInTheQueryStayAllowed) {
  for (const absl::string_view path :
       {"/...", "/a/.../b", "/..foo", "/foo..", "/.hidden", "/a/..b/c",
        "/a.b/c..d", "/%2e%2e%2e", "/.%2e.", "/%2e%2ex", "/x%2e%2e"}) {
    EXPECT_TRUE(ValidateRequestTarget(path).ok())
        << path << ": " << ValidateRequestTarget(path);
  }
  for (const absl::string_view path :
       {"/a%2e%2e/b", "/.%20", "/%2e%2", "/a%2Fb", "/a%2F...%2Fb",
        "/%252e%252e/x", "/q?a=../b", "/q?..", "/a/b?c/./d",
        "/q?next=/../../etc", "/q?x=%2e%2e/%2e"}) {
    EXPECT_TRUE(ValidateRequestTarget(path).ok())
        << path << ": " << ValidateRequestTarget(path);
  }
}

TEST(ValidateRequestTargetTest, ControlBytesAreReportedBeforeDotSegments) {
  EXPECT_EQ(RejectPath("/../\r\n"),
            "path contains a control character at byte 4");
}

TEST(ValidateRequestTargetTest, ALongRefusedPathIsQuotedCutShort) {
  const std::string path = absl::StrCat("/", std::string(100, 'a'), "/..");
  const std::string message = RejectPath(path);
  EXPECT_THAT(message,
              StartsWith(absl::StrCat("path \"/", std::string(63, 'a'),
                                      "...\" has the dot segment \"..\" at "
                                      "byte 102")));
}

TEST(ValidateRequestTargetTest, MustStartWithSlash) {
  EXPECT_EQ(RejectPath(""), "path must start with \"/\" (it is empty)");
  EXPECT_THAT(RejectPath("a/b"), StartsWith("path must start with \"/\""));
  // Absolute-form, authority-form and asterisk-form.
  EXPECT_THAT(RejectPath("http://evil.example/x"),
              StartsWith("path must start with \"/\""));
  EXPECT_THAT(RejectPath("HTTPS://evil.example"),
              StartsWith("path must start with \"/\""));
  EXPECT_THAT(RejectPath("evil.example:80"),
              StartsWith("path must start with \"/\""));
  EXPECT_THAT(RejectPath("*"), StartsWith("path must start with \"/\""));
  EXPECT_THAT(RejectPath("?q=1"), StartsWith("path must start with \"/\""));
}

TEST(ValidateRequestTargetTest, RejectsNetworkPathReference) {
  EXPECT_THAT(RejectPath("//evil.example/x"),
              StartsWith("path must not start with \"//\""));
  EXPECT_THAT(RejectPath("//"), StartsWith("path must not start with \"//\""));
  EXPECT_TRUE(ValidateRequestTarget("/x//evil.example").ok());
}

TEST(ValidateRequestTargetTest, RejectsCrLfNulInjection) {
  EXPECT_EQ(RejectPath("/a\r\nHost: evil"),
            "path contains a control character at byte 2");
  EXPECT_EQ(RejectPath("/abcd\n"),
            "path contains a control character at byte 5");
  EXPECT_EQ(RejectPath("/abcd\r"),
            "path contains a control character at byte 5");
  EXPECT_EQ(RejectPath(absl::string_view("/abcd\0", 6)),
            "path contains a control character at byte 5");
}

TEST(ValidateRequestTargetTest, RejectsEveryControlCharacterAndDel) {
  for (int c = 0; c < 0x20; ++c) {
    const std::string path = absl::StrCat("/x", std::string(1, char(c)));
    EXPECT_THAT(RejectPath(path), HasSubstr("control character at byte 2"))
        << c;
  }
  EXPECT_THAT(RejectPath("/x\x7f"), HasSubstr("control character at byte 2"));
  EXPECT_THAT(RejectPath("/x\t"), HasSubstr("control character"));
}

TEST(ValidateRequestTargetTest, RejectsSpaceFragmentAndNonAscii) {
  EXPECT_THAT(RejectPath("/a b"),
              StartsWith("path contains a space at byte 2"));
  EXPECT_THAT(RejectPath("/a HTTP/1.1"), HasSubstr("space"));
  EXPECT_THAT(RejectPath("/a#frag"),
              StartsWith("path contains \"#\" at byte 2"));
  EXPECT_THAT(RejectPath("/a?q=1#"), HasSubstr("\"#\" at byte 6"));
  EXPECT_THAT(RejectPath("/caf\xc3\xa9"),
              StartsWith("path contains a non-ASCII byte at byte 4"));
  EXPECT_THAT(RejectPath("/\x80"), HasSubstr("non-ASCII"));
  EXPECT_THAT(RejectPath("/\xff"), HasSubstr("non-ASCII"));
}

TEST(ValidateRequestTargetTest, LengthLimitAtEdge) {
  const std::string at_limit =
      absl::StrCat("/", std::string(kMaxRequestTargetBytes - 1, 'a'));
  ASSERT_EQ(at_limit.size(), 8192u);
  EXPECT_TRUE(ValidateRequestTarget(at_limit).ok());
  EXPECT_EQ(RejectPath(absl::StrCat(at_limit, "a")),
            "path is 8193 bytes, over the limit of 8192");
}

// ---- Tokens, names and values ----

TEST(IsTokenCharTest, ExactlyRfc9110Tchar) {
  const std::string tchar =
      "!#$%&'*+-.^_`|~0123456789"
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  for (int c = 0; c < 256; ++c) {
    const bool expected = tchar.find(char(c)) != std::string::npos;
    EXPECT_EQ(IsTokenChar(char(c)), expected) << c;
  }
}

TEST(ValidateHeaderNameTest, TokenRules) {
  EXPECT_TRUE(ValidateHeaderName("X-Request-Id").ok());
  EXPECT_TRUE(ValidateHeaderName("a!#$%&'*+-.^_`|~9").ok());
  EXPECT_EQ(ValidateHeaderName("").message(), "header name is empty");
  EXPECT_EQ(ValidateHeaderName("X Y").message(),
            "header name \"X Y\" is not a valid token");
  for (const absl::string_view bad :
       {"X:Y", ":authority", "X\r\nY", "X\"", "X(Y)", "X/Y", "X@", "X\t",
        "Caf\xc3\xa9"}) {
    EXPECT_EQ(ValidateHeaderName(bad).code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(ValidateHeaderName(absl::string_view("X\0Y", 3)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidateHeaderNameTest, ErrorEscapesTheName) {
  const std::string message(ValidateHeaderName("X\r\nEvil: 1").message());
  EXPECT_EQ(message.find('\r'), std::string::npos);
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_THAT(message, HasSubstr("X\\r\\nEvil: 1"));
}

TEST(ValidateHeaderNameTest, LengthLimitAtEdge) {
  EXPECT_TRUE(ValidateHeaderName(std::string(kMaxHeaderNameBytes, 'x')).ok());
  const absl::Status over =
      ValidateHeaderName(std::string(kMaxHeaderNameBytes + 1, 'x'));
  EXPECT_EQ(over.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(over.message()),
              HasSubstr("is 257 bytes, over the limit of 256"));
}

TEST(ValidateHeaderValueTest, Rules) {
  EXPECT_TRUE(ValidateHeaderValue("").ok());
  EXPECT_TRUE(ValidateHeaderValue("a\tb c, d;q=0.5").ok());
  EXPECT_TRUE(ValidateHeaderValue("obs-text \x80\xff").ok());
  EXPECT_EQ(ValidateHeaderValue("a\r\nX-Evil: 1").message(),
            "header value contains CR at byte 1");
  EXPECT_EQ(ValidateHeaderValue("ab\nc").message(),
            "header value contains LF at byte 2");
  EXPECT_EQ(ValidateHeaderValue(absl::string_view("abc\0", 4)).message(),
            "header value contains NUL at byte 3");
  EXPECT_EQ(ValidateHeaderValue("\x01").message(),
            "header value contains a control character at byte 0");
  EXPECT_EQ(ValidateHeaderValue("\x1f").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateHeaderValue("x\x7f").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidateHeaderValueTest, LengthLimitAtEdge) {
  EXPECT_TRUE(ValidateHeaderValue(std::string(kMaxHeaderValueBytes, 'v')).ok());
  EXPECT_EQ(
      ValidateHeaderValue(std::string(kMaxHeaderValueBytes + 1, 'v')).message(),
      "header value is 8193 bytes, over the limit of 8192");
}

// ---- Hop-by-hop ----

TEST(IsHopByHopTest, ListedNamesAnyCase) {
  for (const absl::string_view name :
       {"Connection", "connection", "KEEP-ALIVE", "Keep-Alive", "TE", "te",
        "Trailer", "Transfer-Encoding", "transfer-encoding", "Upgrade",
        "Proxy-Authorization", "proxy-authenticate", "PROXY-CONNECTION",
        "Proxy-", "proxy-x"}) {
    EXPECT_TRUE(IsHopByHop(name)) << name;
  }
  for (const absl::string_view name :
       {"Accept", "Host", "Content-Length", "Proxy", "Proxyx", "TEE",
        "Trailers", "X-Connection", "Connection-X", "Upgrade-Insecure-Requests",
        ""}) {
    EXPECT_FALSE(IsHopByHop(name)) << name;
  }
}

TEST(HasHeaderTest, CaseInsensitive) {
  const std::vector<HttpHeader> headers = {{"Accept", "*/*"}, {"x-trace", "1"}};
  EXPECT_TRUE(HasHeader(headers, "accept"));
  EXPECT_TRUE(HasHeader(headers, "X-TRACE"));
  EXPECT_FALSE(HasHeader(headers, "X-Trac"));
  EXPECT_FALSE(HasHeader({}, "Accept"));
}

// ---- SanitizeRequestHeaders ----

TEST(SanitizeRequestHeadersTest, KeepsOrderAndDuplicates) {
  EXPECT_THAT(
      AcceptHeaders({{"Accept", "*/*"},
                     {"X-A", "1"},
                     {"x-a", "2"},
                     {"Cookie", "a=1"},
                     {"X-Empty", ""}}),
      ::testing::ElementsAre(Header("Accept", "*/*"), Header("X-A", "1"),
                             Header("x-a", "2"), Header("Cookie", "a=1"),
                             Header("X-Empty", "")));
  EXPECT_TRUE(AcceptHeaders({}).empty());
}

TEST(SanitizeRequestHeadersTest, DropsHopByHop) {
  EXPECT_THAT(
      AcceptHeaders({{"Keep-Alive", "timeout=5"},
                     {"Accept", "*/*"},
                     {"TE", "trailers"},
                     {"Trailer", "X-Sum"},
                     {"upgrade", "h2c"},
                     {"Proxy-Authorization", "Basic eA=="},
                     {"proxy-connection", "keep-alive"},
                     {"X-B", "2"}}),
      ::testing::ElementsAre(Header("Accept", "*/*"), Header("X-B", "2")));
}

TEST(SanitizeRequestHeadersTest, DropsHeadersNamedByConnection) {
  EXPECT_THAT(AcceptHeaders({{"X-Secret", "s"},
                             {"Connection", "close, X-Secret ,,\tx-other"},
                             {"X-Other", "o"},
                             {"X-Kept", "k"},
                             {"CONNECTION", "X-Second"},
                             {"x-second", "2"},
                             {"X-Secret", "again"}}),
              ::testing::ElementsAre(Header("X-Kept", "k")));
  // Options are exact names, not prefixes.
  EXPECT_THAT(AcceptHeaders({{"Connection", "x-a"}, {"X-AB", "1"}}),
              ::testing::ElementsAre(Header("X-AB", "1")));
}

TEST(SanitizeRequestHeadersTest, RejectsSmugglingHeadersInAnyCase) {
  for (const absl::string_view name :
       {"Host", "host", "HOST", "Content-Length", "content-length",
        "CONTENT-LENGTH", "Transfer-Encoding", "transfer-encoding",
        "TrAnSfEr-EnCoDiNg", "Expect", "expect", "EXPECT"}) {
    const std::string message =
        RejectHeaders({{"Accept", "*/*"}, {std::string(name), "x"}});
    EXPECT_THAT(message, StartsWith(absl::StrCat("headers[1] \"", name,
                                                 "\" is not allowed")))
        << name;
  }
}

TEST(SanitizeRequestHeadersTest, RejectsSmugglingEvenWhenConnectionNamesIt) {
  EXPECT_THAT(RejectHeaders({{"Connection", "Host"}, {"Host", "evil"}}),
              HasSubstr("headers[1] \"Host\" is not allowed"));
  EXPECT_THAT(RejectHeaders(
                  {{"Connection", "content-length"}, {"Content-Length", "5"}}),
              HasSubstr("\"Content-Length\" is not allowed"));
}

TEST(SanitizeRequestHeadersTest, InvalidNameNamedByIndex) {
  EXPECT_EQ(RejectHeaders({{"A", "1"}, {"B", "2"}, {"C", "3"}, {"X Y", "4"}}),
            "headers[3].name \"X Y\" is not a valid token");
  EXPECT_EQ(RejectHeaders({{"", "v"}}), "headers[0].name is empty");
  EXPECT_THAT(RejectHeaders({{"X\r\nHost", "evil"}}),
              StartsWith("headers[0].name \"X\\r\\nHost\""));
  EXPECT_THAT(RejectHeaders({{"Host:", "evil"}}),
              HasSubstr("not a valid token"));
  EXPECT_THAT(RejectHeaders({{" Host", "evil"}}),
              HasSubstr("not a valid token"));
}

TEST(SanitizeRequestHeadersTest, InjectionInValueNamedByIndexAndName) {
  EXPECT_EQ(RejectHeaders({{"Accept", "*/*"}, {"X-Foo", "a\r\nHost: evil"}}),
            "headers[1].value (header \"X-Foo\") contains CR at byte 1");
  EXPECT_THAT(RejectHeaders({{"X-Foo", "a\nb"}}), HasSubstr("contains LF"));
  EXPECT_THAT(RejectHeaders({{"X-Foo", std::string("a\0b", 3)}}),
              HasSubstr("contains NUL at byte 1"));
  EXPECT_THAT(RejectHeaders({{"X-Foo", "\x1b[31m"}}),
              HasSubstr("control character at byte 0"));
}

TEST(SanitizeRequestHeadersTest, NulCrLfAnywhereInAValueRefusedNamingIt) {
  for (const char c : {'\0', '\r', '\n'}) {
    const absl::string_view what = c == '\0' ? "NUL" : c == '\r' ? "CR" : "LF";
    for (const size_t at : {0, 2, 4}) {
      std::string value = "abcd";
      value.insert(at, 1, c);
      EXPECT_EQ(RejectHeaders({{"Accept", "*/*"}, {"X-Foo", value}}),
                absl::StrCat("headers[1].value (header \"X-Foo\") contains ",
                             what, " at byte ", at))
          << int(c) << " at " << at;
    }
  }
}

TEST(SanitizeRequestHeadersTest, NulCrLfAnywhereInANameRefusedNamingIt) {
  for (const char c : {'\0', '\r', '\n'}) {
    for (const size_t at : {0, 2, 5}) {
      std::string name = "X-Foo";
      name.insert(at, 1, c);
      const std::string message =
          RejectHeaders({{"Accept", "*/*"}, {name, "v"}});
      EXPECT_THAT(message, StartsWith("headers[1].name \""))
          << int(c) << " at " << at;
      EXPECT_THAT(message, HasSubstr("\" is not a valid token"));
      EXPECT_EQ(message.find(c), std::string::npos) << "raw byte in message";
    }
  }
  EXPECT_EQ(RejectHeaders({{std::string("X-A\0B", 5), "v"}}),
            "headers[0].name \"X-A\\x00\\x42\" is not a valid token");
}

TEST(SanitizeRequestHeadersTest, HeaderCountLimitAtEdge) {
  std::vector<HttpHeader> headers(kMaxRequestHeaders, HttpHeader{"X-N", "v"});
  EXPECT_EQ(AcceptHeaders(headers).size(), 64u);
  headers.push_back({"X-N", "v"});
  EXPECT_EQ(RejectHeaders(headers),
            "headers has 65 entries, over the limit of 64");
}

TEST(SanitizeRequestHeadersTest, TotalBytesLimitAtEdge) {
  // 4 headers of 1 + 8191 bytes = 32768 bytes exactly.
  std::vector<HttpHeader> headers(
      4, HttpHeader{"X", std::string(kMaxHeaderValueBytes - 1, 'v')});
  EXPECT_EQ(AcceptHeaders(headers).size(), 4u);
  headers.back().value += 'v';
  EXPECT_EQ(RejectHeaders(headers),
            "headers total 32769 bytes (names plus values), over the limit "
            "of 32768");
}

TEST(SanitizeRequestHeadersTest, LimitsCountDroppedHeadersToo) {
  std::vector<HttpHeader> headers(kMaxRequestHeaders + 1,
                                  HttpHeader{"Keep-Alive", "1"});
  EXPECT_THAT(RejectHeaders(headers), HasSubstr("over the limit of 64"));
}

TEST(SanitizeRequestHeadersTest, PerHeaderLimitsNamedByIndex) {
  EXPECT_THAT(
      RejectHeaders(
          {{"A", "1"}, {"X", std::string(kMaxHeaderValueBytes + 1, 'v')}}),
      StartsWith("headers[1].value (header \"X\") is 8193 bytes"));
  EXPECT_THAT(RejectHeaders({{std::string(kMaxHeaderNameBytes + 1, 'n'), ""}}),
              HasSubstr("headers[0].name \"nnnn"));
}

// ---- SanitizeResponseHeaders ----

TEST(SanitizeResponseHeadersTest, DropsHopByHopAndConnectionNamed) {
  EXPECT_THAT(SanitizeResponseHeaders({{"Content-Type", "text/plain"},
                                       {"Connection", "keep-alive, X-Hop"},
                                       {"Keep-Alive", "timeout=5"},
                                       {"Transfer-Encoding", "chunked"},
                                       {"X-Hop", "1"},
                                       {"Proxy-Authenticate", "Basic"},
                                       {"Content-Length", "3"},
                                       {"Set-Cookie", "a=1"},
                                       {"set-cookie", "b=2"}}),
              ::testing::ElementsAre(Header("content-type", "text/plain"),
                                     Header("content-length", "3"),
                                     Header("set-cookie", "a=1"),
                                     Header("set-cookie", "b=2")));
  EXPECT_TRUE(SanitizeResponseHeaders({}).empty());
}

TEST(SanitizeResponseHeadersTest, EveryValueIsUtf8AndEveryNameAToken) {
  EXPECT_THAT(
      SanitizeResponseHeaders({{"X-Latin1", "caf\xE9"},
                               {"X-Utf8", "caf\xC3\xA9"},
                               {"Bad Name", "dropped"},
                               {"X-\xE9", "dropped"},
                               {"", "dropped"},
                               {"X-Cut", "\xE2\x82"}}),
      ::testing::ElementsAre(Header("x-latin1", "caf\xC3\xA9"),
                             Header("x-utf8", "caf\xC3\xA9"),
                             Header("x-cut", "\xC3\xA2\xC2\x82")));
}

}  // namespace
}  // namespace tailgate::hygiene
