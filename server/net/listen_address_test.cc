#include "server/net/listen_address.h"

#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

TEST(ListenAddressTest, ParsesIpv4HostAndPort) {
  absl::StatusOr<ListenAddress> a = ParseListenAddress("127.0.0.1:8080");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->is_unix);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8080);
  EXPECT_EQ(a->ToString(), "127.0.0.1:8080");
}

TEST(ListenAddressTest, ParsesBracketedIpv6) {
  absl::StatusOr<ListenAddress> a = ParseListenAddress("[::1]:9090");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 9090);
  EXPECT_EQ(a->ToString(), "[::1]:9090");
}

TEST(ListenAddressTest, ParsesHostNames) {
  for (const char* text : {"localhost:1", "metrics-1.internal:2"}) {
    EXPECT_TRUE(ParseListenAddress(text).ok()) << text;
  }
}

TEST(ListenAddressTest, PortEdges) {
  EXPECT_EQ(ParseListenAddress("127.0.0.1:0")->port, 0);
  EXPECT_EQ(ParseListenAddress("127.0.0.1:65535")->port, 65535);
  for (const char* text :
       {"127.0.0.1:65536", "127.0.0.1:", "127.0.0.1:-1", "127.0.0.1:+80",
        "127.0.0.1:8o", "127.0.0.1:000080", "127.0.0.1"}) {
    EXPECT_EQ(ParseListenAddress(text).status().code(),
              absl::StatusCode::kInvalidArgument)
        << text;
  }
}

TEST(ListenAddressTest, RejectsBadHosts) {
  for (const char* text :
       {":8080", "::1:8080", "[127.0.0.1]:80", "[::1:80", "1.2.3.999:80",
        "a_b:80", "-a:80", "a..b:80", "a b:80"}) {
    EXPECT_EQ(ParseListenAddress(text).status().code(),
              absl::StatusCode::kInvalidArgument)
        << text;
  }
}

TEST(ListenAddressTest, ErrorNamesTheProblem) {
  EXPECT_EQ(ParseListenAddress("127.0.0.1:70000").status().message(),
            "port must be in [0, 65535], got \"70000\"");
  EXPECT_EQ(ParseListenAddress("::1:80").status().message(),
            "an IPv6 address needs brackets: \"[::1]:80\"");
}

TEST(ListenAddressTest, ParsesUnixSocketPath) {
  absl::StatusOr<ListenAddress> a = ParseListenAddress("unix:/run/t.sock");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->is_unix);
  EXPECT_EQ(a->path, "/run/t.sock");
  EXPECT_EQ(a->ToString(), "unix:/run/t.sock");
  EXPECT_EQ(a->WithPort(5).ToString(), "unix:/run/t.sock");
}

TEST(ListenAddressTest, RejectsRelativeEmptyOrLongUnixPath) {
  EXPECT_FALSE(ParseListenAddress("unix:").ok());
  EXPECT_FALSE(ParseListenAddress("unix:rel.sock").ok());
  EXPECT_TRUE(ParseListenAddress("unix:/" + std::string(106, 'a')).ok());
  EXPECT_FALSE(ParseListenAddress("unix:/" + std::string(107, 'a')).ok());
}

TEST(ListenAddressTest, WithPortReportsTheBoundPort) {
  EXPECT_EQ(ParseListenAddress("[::1]:0")->WithPort(43121).ToString(),
            "[::1]:43121");
}

TEST(UnixSocketModeTest, ParsesOctal) {
  EXPECT_EQ(ParseUnixSocketMode("0660").value_or(-1), 0660);
  EXPECT_EQ(ParseUnixSocketMode("660").value_or(-1), 0660);
  EXPECT_EQ(ParseUnixSocketMode("0o600").value_or(-1), 0600);
  EXPECT_EQ(ParseUnixSocketMode("0777").value_or(-1), 0777);
}

TEST(UnixSocketModeTest, RefusesWhatIsNotAModeTheOwnerCanUse) {
  EXPECT_EQ(ParseUnixSocketMode("rw-rw----").status().message(),
            "want permission bits in octal (e.g. 0660), got \"rw-rw----\"");
  EXPECT_EQ(ParseUnixSocketMode("0680").status().message(),
            "want permission bits in octal (e.g. 0660), got \"0680\"");
  EXPECT_FALSE(ParseUnixSocketMode("").ok());
  EXPECT_FALSE(ParseUnixSocketMode("-660").ok());
  EXPECT_FALSE(ParseUnixSocketMode("00660").ok());
  EXPECT_EQ(ParseUnixSocketMode("4770").status().message(),
            "must be at most 0777 (no setuid, setgid or sticky bit), got "
            "\"4770\"");
  EXPECT_EQ(ParseUnixSocketMode("0460").status().message(),
            "must give the owner read and write (0600 to 0777), got \"0460\"");
  EXPECT_FALSE(ParseUnixSocketMode("0").ok());
}

}  // namespace
}  // namespace tailgate::server
