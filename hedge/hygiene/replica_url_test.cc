#include "hedge/hygiene/replica_url.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::hygiene {
namespace {

using ::testing::HasSubstr;

// The error message of a URL that must be rejected.
std::string RejectUrl(absl::string_view url) {
  absl::StatusOr<ReplicaUrl> replica = ParseReplicaUrl(url);
  EXPECT_EQ(replica.status().code(), absl::StatusCode::kInvalidArgument) << url;
  return std::string(replica.status().message());
}

std::string RejectList(absl::string_view list) {
  absl::StatusOr<std::vector<ReplicaUrl>> replicas = ParseReplicaList(list);
  EXPECT_EQ(replicas.status().code(), absl::StatusCode::kInvalidArgument)
      << list;
  return std::string(replicas.status().message());
}

TEST(ParseReplicaUrlTest, FullUrl) {
  absl::StatusOr<ReplicaUrl> r = ParseReplicaUrl("http://10.0.0.7:8080/base");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->configured, "http://10.0.0.7:8080/base");
  EXPECT_EQ(r->scheme, "http");
  EXPECT_EQ(r->host, "10.0.0.7");
  EXPECT_EQ(r->port, 8080);
  EXPECT_EQ(r->base_path, "/base");
  EXPECT_EQ(r->origin, "http://10.0.0.7:8080");
}

TEST(ParseReplicaUrlTest, DefaultPorts) {
  absl::StatusOr<ReplicaUrl> http = ParseReplicaUrl("http://a.example");
  ASSERT_TRUE(http.ok()) << http.status();
  EXPECT_EQ(http->port, 80);
  EXPECT_EQ(http->origin, "http://a.example:80");
  EXPECT_EQ(http->base_path, "");

  absl::StatusOr<ReplicaUrl> https = ParseReplicaUrl("https://a.example");
  ASSERT_TRUE(https.ok()) << https.status();
  EXPECT_EQ(https->port, 443);
  EXPECT_EQ(https->origin, "https://a.example:443");
}

TEST(ParseReplicaUrlTest, SchemeAndHostLowerCasedConfiguredKept) {
  absl::StatusOr<ReplicaUrl> r =
      ParseReplicaUrl("HTTPS://Replica-1.EXAMPLE/Api");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->configured, "HTTPS://Replica-1.EXAMPLE/Api");
  EXPECT_EQ(r->scheme, "https");
  EXPECT_EQ(r->host, "replica-1.example");
  EXPECT_EQ(r->base_path, "/Api");  // paths are case-sensitive
  EXPECT_EQ(r->origin, "https://replica-1.example:443");
}

TEST(ParseReplicaUrlTest, TrailingSlashBasePath) {
  absl::StatusOr<ReplicaUrl> r = ParseReplicaUrl("http://h:1/base/");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->base_path, "/base");
  EXPECT_EQ(r->port, 1);

  absl::StatusOr<ReplicaUrl> root = ParseReplicaUrl("http://h/");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->base_path, "");

  absl::StatusOr<ReplicaUrl> nested = ParseReplicaUrl("http://h/a/b%2Fc//");
  ASSERT_TRUE(nested.ok()) << nested.status();
  EXPECT_EQ(nested->base_path, "/a/b%2Fc");
}

TEST(ParseReplicaUrlTest, Ipv6KeepsBracketsAndIsCanonical) {
  absl::StatusOr<ReplicaUrl> r = ParseReplicaUrl("http://[::1]:8080/x");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->host, "[::1]");
  EXPECT_EQ(r->port, 8080);
  EXPECT_EQ(r->origin, "http://[::1]:8080");
  EXPECT_EQ(r->base_path, "/x");

  absl::StatusOr<ReplicaUrl> long_form =
      ParseReplicaUrl("https://[2001:DB8:0:0:0:0:0:1]");
  ASSERT_TRUE(long_form.ok()) << long_form.status();
  EXPECT_EQ(long_form->host, "[2001:db8::1]");
  EXPECT_EQ(long_form->origin, "https://[2001:db8::1]:443");
}

TEST(ParseReplicaUrlTest, Ipv6Errors) {
  EXPECT_THAT(RejectUrl("http://[::1"), HasSubstr("closing \"]\""));
  EXPECT_THAT(RejectUrl("http://[::g]"), HasSubstr("not a valid IPv6"));
  EXPECT_THAT(RejectUrl("http://[]"), HasSubstr("not a valid IPv6"));
  EXPECT_THAT(RejectUrl("http://[fe80::1%25eth0]"),
              HasSubstr("not a valid IPv6"));
  EXPECT_THAT(RejectUrl("http://[::1]x"), HasSubstr("unexpected \"x\""));
  EXPECT_THAT(RejectUrl("http://[::1]:"), HasSubstr("port is empty"));
  EXPECT_THAT(RejectUrl("http://::1"), HasSubstr("host is required"));
}

TEST(ParseReplicaUrlTest, UnsupportedSchemeIsNamed) {
  EXPECT_EQ(RejectUrl("ftp://x"),
            "backend \"ftp://x\": unsupported scheme \"ftp\" (want http or "
            "https)");
  EXPECT_THAT(RejectUrl("unix:///tmp/s"), HasSubstr("scheme \"unix\""));
  EXPECT_THAT(RejectUrl("10.0.0.1:80"), HasSubstr("missing scheme"));
  EXPECT_THAT(RejectUrl("://h"), HasSubstr("missing scheme"));
  EXPECT_THAT(RejectUrl("http:/h"), HasSubstr("missing scheme"));
}

TEST(ParseReplicaUrlTest, HostRequired) {
  EXPECT_THAT(RejectUrl("http://"), HasSubstr("host is required"));
  EXPECT_THAT(RejectUrl("http:///base"), HasSubstr("host is required"));
  EXPECT_THAT(RejectUrl("http://:80"), HasSubstr("host is required"));
}

TEST(ParseReplicaUrlTest, HostCharacters) {
  EXPECT_THAT(RejectUrl("http://a!b"), HasSubstr("invalid character \"!\""));
  EXPECT_THAT(RejectUrl("http://a..b"), HasSubstr("empty label"));
  EXPECT_THAT(RejectUrl("http://.a"), HasSubstr("empty label"));
  EXPECT_THAT(RejectUrl("http://a%2eb"), HasSubstr("invalid character"));
  EXPECT_TRUE(ParseReplicaUrl("http://replica_1.svc-x").ok());
}

TEST(ParseReplicaUrlTest, UserinfoRejected) {
  EXPECT_THAT(RejectUrl("http://u:p@h"), HasSubstr("userinfo"));
  EXPECT_THAT(RejectUrl("http://u@h:80/x"), HasSubstr("userinfo"));
  EXPECT_THAT(RejectUrl("http://@h"), HasSubstr("userinfo"));
}

TEST(ParseReplicaUrlTest, QueryAndFragmentRejected) {
  EXPECT_THAT(RejectUrl("http://h/base?x=1"), HasSubstr("query"));
  EXPECT_THAT(RejectUrl("http://h?x"), HasSubstr("query"));
  EXPECT_THAT(RejectUrl("http://h/base#top"), HasSubstr("fragment"));
  EXPECT_THAT(RejectUrl("http://h#"), HasSubstr("fragment"));
}

TEST(ParseReplicaUrlTest, PortEdges) {
  absl::StatusOr<ReplicaUrl> max = ParseReplicaUrl("http://h:65535");
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(max->port, 65535);
  absl::StatusOr<ReplicaUrl> leading_zero = ParseReplicaUrl("http://h:0080");
  ASSERT_TRUE(leading_zero.ok()) << leading_zero.status();
  EXPECT_EQ(leading_zero->origin, "http://h:80");

  EXPECT_THAT(RejectUrl("http://h:65536"), HasSubstr("out of range"));
  EXPECT_THAT(RejectUrl("http://h:0"), HasSubstr("out of range"));
  EXPECT_THAT(RejectUrl("http://h:99999999999999999999"),
              HasSubstr("out of range"));
  EXPECT_THAT(RejectUrl("http://h:"), HasSubstr("port is empty"));
  EXPECT_THAT(RejectUrl("http://h:8o"), HasSubstr("not a decimal number"));
  EXPECT_THAT(RejectUrl("http://h:-1"), HasSubstr("not a decimal number"));
  EXPECT_THAT(RejectUrl("http://h:+80"), HasSubstr("not a decimal number"));
  EXPECT_THAT(RejectUrl("http://h:80:81"), HasSubstr("not a decimal number"));
}

TEST(ParseReplicaUrlTest, WhitespaceControlAndNonAsciiRejected) {
  EXPECT_THAT(RejectUrl("http://h /x"), HasSubstr("whitespace at byte 8"));
  EXPECT_THAT(RejectUrl(" http://h"), HasSubstr("whitespace at byte 0"));
  EXPECT_THAT(RejectUrl("http://h\t"), HasSubstr("whitespace"));
  EXPECT_THAT(RejectUrl("http://h/x\r\nHost: evil"),
              HasSubstr("control character at byte 10"));
  EXPECT_THAT(RejectUrl(absl::string_view("http://h\0x", 10)),
              HasSubstr("control character at byte 8"));
  EXPECT_THAT(RejectUrl("http://h\x7f"), HasSubstr("control character"));
  EXPECT_THAT(RejectUrl("http://h\xc3\xa9.example"), HasSubstr("non-ASCII"));
  EXPECT_THAT(RejectUrl("http://evil\\@good"), HasSubstr("backslash"));
}

TEST(ParseReplicaUrlTest, ErrorQuotesControlBytesEscaped) {
  const std::string message = RejectUrl("http://h/\r\n");
  EXPECT_EQ(message.find('\r'), std::string::npos);
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_THAT(message, HasSubstr("\\r\\n"));
}

TEST(ParseReplicaUrlTest, BasePathMustBeOriginForm) {
  EXPECT_THAT(RejectUrl("http://h/a/../b"), HasSubstr("\"..\" segment"));
  EXPECT_THAT(RejectUrl("http://h/.."), HasSubstr("\"..\" segment"));
  EXPECT_THAT(RejectUrl("http://h/./a"), HasSubstr("\"..\" segment"));
  EXPECT_THAT(RejectUrl("http://h/a%zz"), HasSubstr("malformed %-escape"));
  EXPECT_THAT(RejectUrl("http://h/a%2"), HasSubstr("malformed %-escape"));
  EXPECT_THAT(RejectUrl("http://h/a\"b"), HasSubstr("invalid character"));
  EXPECT_THAT(RejectUrl("http://h/a<b>"), HasSubstr("invalid character"));
  absl::StatusOr<ReplicaUrl> r = ParseReplicaUrl("http://h/~a-b_c.d;v=1:@!$");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->base_path, "/~a-b_c.d;v=1:@!$");
}

TEST(ParseReplicaListTest, TrimsAndKeepsOrder) {
  absl::StatusOr<std::vector<ReplicaUrl>> list =
      ParseReplicaList(" http://a:8080 ,https://b/api/,\thttp://[::1]:9 ");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].configured, "http://a:8080");
  EXPECT_EQ((*list)[1].origin, "https://b:443");
  EXPECT_EQ((*list)[1].base_path, "/api");
  EXPECT_EQ((*list)[2].origin, "http://[::1]:9");
}

TEST(ParseReplicaListTest, SingleEntry) {
  absl::StatusOr<std::vector<ReplicaUrl>> list = ParseReplicaList("http://a");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 1u);
}

TEST(ParseReplicaListTest, EmptyListAndEntriesRejected) {
  EXPECT_EQ(RejectList(""), "backend list is empty");
  EXPECT_EQ(RejectList("  "), "backend list is empty");
  EXPECT_EQ(RejectList("http://a,,http://b"),
            "backend list entry 2 of 3 is empty");
  EXPECT_THAT(RejectList("http://a,"), HasSubstr("entry 2 of 2 is empty"));
  EXPECT_THAT(RejectList(",http://a"), HasSubstr("entry 1 of 2 is empty"));
  EXPECT_THAT(RejectList("http://a, ,http://b"), HasSubstr("entry 2 of 3"));
}

TEST(ParseReplicaListTest, BadEntryNamed) {
  EXPECT_EQ(RejectList("http://a, ftp://x"),
            "backend \"ftp://x\": unsupported scheme \"ftp\" (want http or "
            "https)");
}

TEST(ParseReplicaListTest, DuplicatesAfterNormalisationNameBothSpellings) {
  EXPECT_EQ(RejectList("http://A:80,http://a"),
            "backends \"http://A:80\" and \"http://a\" are the same replica "
            "(http://a:80)");
  EXPECT_THAT(RejectList("https://h/base/, HTTPS://H:443/base"),
              HasSubstr("\"https://h/base/\" and \"HTTPS://H:443/base\""));
  EXPECT_THAT(RejectList("http://[::1]:80,http://[0:0::1]"),
              HasSubstr("same replica (http://[::1]:80)"));
  EXPECT_THAT(RejectList("http://a,http://b,http://a/"),
              HasSubstr("\"http://a\" and \"http://a/\""));
}

TEST(ParseReplicaListTest, DifferentSchemePortOrBaseAreDistinct) {
  absl::StatusOr<std::vector<ReplicaUrl>> list = ParseReplicaList(
      "http://a,https://a,http://a:8080,http://a/v1,http://a/V1,http://b");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 6u);
}

TEST(BuildAttemptUrlTest, PreservesTargetByteForByte) {
  absl::StatusOr<ReplicaUrl> r = ParseReplicaUrl("http://H:8080/base/");
  ASSERT_TRUE(r.ok()) << r.status();
  for (const absl::string_view target :
       {"/a%2Fb?q=1", "/%2e%2e%2e/...;/etc", "/x?x=%00", "/a//b/.../..c",
        "/q?next=../../d", "/?", "/", "/%7Euser?a=b&a=c;d"}) {
    EXPECT_EQ(BuildAttemptUrl(*r, target),
              absl::StrCat("http://h:8080/base", target));
  }
}

TEST(BuildAttemptUrlTest, NoBasePath) {
  absl::StatusOr<ReplicaUrl> r = ParseReplicaUrl("https://[::1]");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(BuildAttemptUrl(*r, "/a%2Fb?q=1"), "https://[::1]:443/a%2Fb?q=1");
}

}  // namespace
}  // namespace tailgate::hygiene
