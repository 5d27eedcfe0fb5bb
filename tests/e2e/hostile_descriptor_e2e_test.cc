// End-to-end tests of hostile read descriptors through the real tailgate
// binary: CR, LF and NUL injection into the path and the headers,
// absolute-form, authority-form and network-path targets, Host and framing
// header smuggling, hop-by-hop headers, proxy variables in the sidecar's
// environment, and every trick we know to make the sidecar connect to a
// host that is not a configured replica.
//
// Each test also runs a trap: a loopback replica that is not configured,
// whose address the hostile descriptors name wherever they can. TearDown
// checks that it never saw a connection.
//
// tailgate_contract_e2e_test.cc (EveryInvalidArgumentClassNamesTheField)
// has one plain case per INVALID_ARGUMENT class; these are the attacks.
// //hedge/hygiene:hygiene_fuzzer and //server/read:read_descriptor_fuzzer
// cover the same functions with generated inputs.

#include <grpcpp/grpcpp.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/process/tailgate_process.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::StartsWith;

constexpr absl::string_view kOriginFormOnly =
    "path must start with \"/\" (only origin-form targets are accepted)";

v1::ReadRequest WithPath(std::string path) {
  v1::ReadRequest request;
  request.set_path(std::move(path));
  return request;
}

// A read of "/ok" whose headers[1] is `name: value` (headers[0] is a
// harmless Accept, so that messages must name the right index).
v1::ReadRequest WithHeader(std::string name, std::string value) {
  v1::ReadRequest request = WithPath("/ok");
  v1::Header* accept = request.add_headers();
  accept->set_name("Accept");
  accept->set_value("*/*");
  v1::Header* header = request.add_headers();
  header->set_name(std::move(name));
  header->set_value(std::move(value));
  return request;
}

// The values of every header called `name` (case-insensitive).
std::vector<std::string> Values(const HeaderList& headers,
                                absl::string_view name) {
  std::vector<std::string> values;
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) values.push_back(value);
  }
  return values;
}

class HostileDescriptorE2eTest : public TailgateE2eTest {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Replica>> trap =
        Replica::Start(Always(Body("trap")));
    ASSERT_TRUE(trap.ok()) << trap.status();
    trap_ = *std::move(trap);
    trap_address_ = absl::StrCat("127.0.0.1:", trap_->port());
  }

  void TearDown() override {
    if (trap_ == nullptr) return;  // SetUp failed
    EXPECT_EQ(trap_->connections_accepted(), 0)
        << "a descriptor steered the sidecar to a host that is not a replica";
  }

  // The one configured replica; answers "replica".
  Replica& StartWithOneReplica(const std::string& base_path = "") {
    Replica& replica = AddReplica(Always(Body("replica")));
    StartTailgateWithBackends({replica.url() + base_path},
                              {"--hedge_fraction=0"});
    return replica;
  }

  // Expects INVALID_ARGUMENT with a message that starts with `prefix` (the
  // field) and escapes every control byte.
  void ExpectInvalid(const v1::ReadRequest& request, absl::string_view prefix) {
    SCOPED_TRACE(absl::StrCat("path \"", absl::CHexEscape(request.path()),
                              "\", ", request.headers_size(), " headers"));
    v1::ReadResponse response;
    const grpc::Status status = Read(request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << status.error_message();
    EXPECT_THAT(status.error_message(), StartsWith(std::string(prefix)));
    for (const char c : status.error_message()) {
      EXPECT_FALSE(absl::ascii_iscntrl(c)) << status.error_message();
    }
  }

  // Expects headers[1] called `name` to be refused as not a token, the
  // name quoted escaped.
  void ExpectNotAToken(const std::string& name) {
    ExpectInvalid(WithHeader(name, "x"),
                  absl::StrCat("headers[1].name \"", absl::CHexEscape(name),
                               "\" is not a valid token"));
  }

  // Expects the read to be answered by `replica`, which received exactly
  // `target` (byte for byte) addressed to itself.
  void ExpectForwardedAs(const v1::ReadRequest& request, Replica& replica,
                         const std::string& target) {
    SCOPED_TRACE(absl::CHexEscape(request.path()));
    const int64_t before = replica.requests_received();
    v1::ReadResponse response;
    const grpc::Status status = Read(request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.status(), 200);
    EXPECT_EQ(response.body(), "replica");
    const std::vector<ReplicaRequest> requests = replica.requests();
    ASSERT_EQ(requests.size(), static_cast<size_t>(before) + 1);
    EXPECT_EQ(requests.back().uri, target);
    EXPECT_THAT(Values(requests.back().headers, "Host"),
                ElementsAre(absl::StrCat("127.0.0.1:", replica.port())));
  }

  // Starts tailgate on the first replica added, with `environment` over
  // the inherited one (see TailgateProcess::Start).
  void StartTailgateWithEnvironment(
      const std::vector<std::string>& environment) {
    absl::StatusOr<std::unique_ptr<TailgateProcess>> process =
        TailgateProcess::Start(TailgateBinary(),
                               {"--backends=" + replicas_[0]->url()},
                               environment);
    ASSERT_TRUE(process.ok()) << process.status();
    tailgate_ = *std::move(process);
    channel_ = grpc::CreateChannel(tailgate_->grpc_address(),
                                   grpc::InsecureChannelCredentials());
    reads_ = v1::HedgedRead::NewStub(channel_);
  }

  std::unique_ptr<Replica> trap_;
  std::string trap_address_;  // "127.0.0.1:PORT"
};

TEST_F(HostileDescriptorE2eTest, CrLfNulInThePathAreRejectedUnsent) {
  Replica& replica = StartWithOneReplica();
  const struct {
    std::string path;
    int byte;
  } cases[] = {
      // Request splitting; the space is percent-encoded so that the CR is
      // the first bad byte.
      {absl::StrCat("/x%20HTTP/1.1\r\nHost: ", trap_address_, "\r\n\r\nGET /y"),
       13},
      {"/x\r\nX-Injected: 1", 2},
      {"/x\r", 2},
      {"/x\n", 2},
      {std::string("/x\0/../admin", 12), 2},
      {std::string("/\0", 2), 1},
  };
  for (const auto& c : cases) {
    ExpectInvalid(
        WithPath(c.path),
        absl::StrCat("path contains a control character at byte ", c.byte));
  }
  EXPECT_EQ(replica.connections_accepted(), 0);
}

TEST_F(HostileDescriptorE2eTest, CrLfNulInAHeaderNameAreRejectedUnsent) {
  Replica& replica = StartWithOneReplica();
  for (const std::string& name : std::vector<std::string>{
           std::string("X-A\r\nHost"), std::string("X-A\r"),
           std::string("X-A\n"), std::string("X-A\0", 4),
           std::string("\r\nX-A")}) {
    ExpectNotAToken(name);
  }
  EXPECT_EQ(replica.connections_accepted(), 0);
}

TEST_F(HostileDescriptorE2eTest, CrLfNulInAHeaderValueAreRejectedUnsent) {
  Replica& replica = StartWithOneReplica();
  const struct {
    std::string value;
    absl::string_view what;
  } cases[] = {
      {absl::StrCat("1\r\nHost: ", trap_address_), "CR at byte 1"},
      {"1\r\n\r\nGET /admin HTTP/1.1", "CR at byte 1"},
      {"1\nTransfer-Encoding: chunked", "LF at byte 1"},
      {"1\n\tfolded", "LF at byte 1"},
      {"1\r", "CR at byte 1"},
      {std::string("1\0x", 3), "NUL at byte 1"},
  };
  for (const auto& c : cases) {
    ExpectInvalid(
        WithHeader("X-A", c.value),
        absl::StrCat("headers[1].value (header \"X-A\") contains ", c.what));
  }
  EXPECT_EQ(replica.connections_accepted(), 0);
}

TEST_F(HostileDescriptorE2eTest, PercentEncodedCrLfNulAreForwardedUndecoded) {
  Replica& replica = StartWithOneReplica();
  for (const std::string& target : std::vector<std::string>{
           "/x%0d%0aHost:%20evil.example", "/x%0D%0A%0D%0AGET%20/y", "/x%00y",
           "/x?q=%0a&r=%00"}) {
    ExpectForwardedAs(WithPath(target), replica, target);
  }
}

TEST_F(HostileDescriptorE2eTest, DotSegmentsAreRejectedUnsentUnderABasePath) {
  Replica& replica = StartWithOneReplica("/base");
  for (const std::string& path : std::vector<std::string>{
           "/../victim", "/%2e%2e/victim", "/%2E%2e/victim", "/.%2e/victim",
           "/a/../../victim", "/a/..", "/./victim", "/..;/victim",
           "/a%2F..%2F..%2Fvictim", "/a\\..\\..\\victim"}) {
    ExpectInvalid(WithPath(path),
                  absl::StrCat("path \"", absl::CHexEscape(path),
                               "\" has the dot segment "));
  }
  EXPECT_EQ(replica.connections_accepted(), 0);
  // Names made of dots, and dots in the query, are not dot segments.
  for (const std::string& target : std::vector<std::string>{
           "/...", "/..foo/x", "/%2e%2e%2e", "/q?next=../../victim"}) {
    ExpectForwardedAs(WithPath(target), replica, "/base" + target);
  }
}

TEST_F(HostileDescriptorE2eTest, AbsoluteFormTargetsAreRejected) {
  Replica& replica = StartWithOneReplica();
  for (const std::string& path : std::vector<std::string>{
           "http://evil.example/x", "https://evil.example/x",
           "HTTP://EVIL.EXAMPLE/x",
           absl::StrCat("http://", trap_address_, "/x"),
           absl::StrCat("http:", trap_address_, "/x"), "ftp://evil.example/",
           "*"}) {
    ExpectInvalid(WithPath(path), kOriginFormOnly);
  }
  EXPECT_EQ(replica.connections_accepted(), 0);
}

TEST_F(HostileDescriptorE2eTest, AuthorityFormTargetsAreRejected) {
  Replica& replica = StartWithOneReplica();
  for (const std::string& path : std::vector<std::string>{
           std::string("evil.example:80"), std::string("evil.example:443"),
           trap_address_, std::string("[::1]:80"),
           absl::StrCat("user@", trap_address_)}) {
    ExpectInvalid(WithPath(path), kOriginFormOnly);
  }
  EXPECT_EQ(replica.connections_accepted(), 0);
}

TEST_F(HostileDescriptorE2eTest, NetworkPathTargetsAreRejected) {
  Replica& replica = StartWithOneReplica();
  for (const std::string& path : std::vector<std::string>{
           std::string("//evil.example/x"), absl::StrCat("//", trap_address_),
           absl::StrCat("//", trap_address_, "/x"), std::string("///x"),
           std::string("//")}) {
    ExpectInvalid(WithPath(path), "path must not start with \"//\"");
  }
  // What a WHATWG parser would read as "//": rejected for not starting
  // with "/".
  ExpectInvalid(WithPath(absl::StrCat("\\\\", trap_address_, "\\x")),
                kOriginFormOnly);
  EXPECT_EQ(replica.connections_accepted(), 0);
}

TEST_F(HostileDescriptorE2eTest, HostAndFramingHeadersAreRejectedInAnyCase) {
  Replica& replica = StartWithOneReplica();
  const struct {
    absl::string_view name;
    std::string value;
  } cases[] = {
      {"HOST", trap_address_},          {"hOsT", "evil.example"},
      {"content-length", "0"},          {"CONTENT-LENGTH", "5"},
      {"TRANSFER-ENCODING", "chunked"}, {"tRaNsFeR-eNcOdInG", " chunked"},
      {"expect", "100-continue"},       {"EXPECT", "100-CONTINUE"},
  };
  for (const auto& c : cases) {
    ExpectInvalid(WithHeader(std::string(c.name), c.value),
                  absl::StrCat("headers[1] \"", c.name, "\" is not allowed: "));
  }
  EXPECT_EQ(replica.connections_accepted(), 0);
}

TEST_F(HostileDescriptorE2eTest, SmugglingNamesWithSpacesOrColonsAreNotTokens) {
  Replica& replica = StartWithOneReplica();
  for (const std::string& name : std::vector<std::string>{
           "Host ", " Host", "Host\t", "Transfer-Encoding ",
           "Transfer-Encoding: chunked", "tRANSFER-eNCODING:chunked",
           "Content-Length:", "Host:evil.example", "Expect :100-continue"}) {
    ExpectNotAToken(name);
  }
  EXPECT_EQ(replica.connections_accepted(), 0);
}

TEST_F(HostileDescriptorE2eTest, ConnectionNamedAndHopByHopHeadersStayHere) {
  Replica& replica = StartWithOneReplica();
  v1::ReadRequest request = WithPath("/x");
  for (const auto& [name, value] : HeaderList{
           {"Connection", "X-Secret, x-other , Keep-Alive"},
           {"X-Secret", "s1"},
           {"x-secret", "s2"},
           {"X-OTHER", "o"},
           {"Keep-Alive", "timeout=5"},
           {"TE", "trailers"},
           {"Trailer", "X-Sum"},
           {"Upgrade", "h2c"},
           {"Proxy-Authorization", "Basic Zm9vOmJhcg=="},
           {"Proxy-Connection", "keep-alive"},
           {"X-Kept", "yes"},
           {"Accept", "text/plain"},
       }) {
    v1::Header* header = request.add_headers();
    header->set_name(name);
    header->set_value(value);
  }
  ExpectForwardedAs(request, replica, "/x");
  const HeaderList sent = replica.requests().back().headers;
  for (const char* name :
       {"Connection", "X-Secret", "X-Other", "Keep-Alive", "TE", "Trailer",
        "Upgrade", "Proxy-Authorization", "Proxy-Connection"}) {
    EXPECT_THAT(Values(sent, name), IsEmpty()) << name;
  }
  EXPECT_THAT(Values(sent, "X-Kept"), ElementsAre("yes"));
  EXPECT_THAT(Values(sent, "Accept"), ElementsAre("text/plain"));
}

TEST_F(HostileDescriptorE2eTest, ProxyVariablesInTheEnvironmentAreIgnored) {
  Replica& replica = AddReplica(Always(Body("replica")));
  const std::string proxy = absl::StrCat("http://", trap_address_);
  std::vector<std::string> environment;
  for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy",
                           "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) {
    environment.push_back(absl::StrCat(name, "=", proxy));
  }
  // An inherited no_proxy could exempt 127.0.0.1 and prove nothing.
  environment.push_back("no_proxy=");
  environment.push_back("NO_PROXY=");
  StartTailgateWithEnvironment(environment);

  // The control: the variables really are in the sidecar's environment.
  std::ifstream environ_file(
      absl::StrCat("/proc/", tailgate_->pid(), "/environ"));
  const std::vector<std::string> sidecar_environment = absl::StrSplit(
      std::string(std::istreambuf_iterator<char>(environ_file), {}), '\0');
  for (const std::string& entry : environment) {
    EXPECT_THAT(sidecar_environment, Contains(entry));
  }

  ExpectForwardedAs(WithPath("/direct"), replica, "/direct");
  // Direct, not through the trap: curl's connection, plus perhaps already
  // the warm spare of --preconnect.
  EXPECT_GE(replica.connections_accepted(), 1);
  EXPECT_LE(replica.connections_accepted(), 2);
}

TEST_F(HostileDescriptorE2eTest, NoDescriptorReachesAHostThatIsNotAReplica) {
  Replica& replica = StartWithOneReplica("/base");
  const std::string& trap = trap_address_;
  // Each target is what a lax URL parser or a request-target rewriter could
  // read as naming the trap; all go to the replica, under its base path,
  // exactly as sent.
  for (const std::string& target : std::vector<std::string>{
           absl::StrCat("/@", trap, "/x"),
           std::string("/@evil.example/"),
           absl::StrCat("/\\", trap, "/x"),
           std::string("/\\\\evil.example\\x"),
           absl::StrCat("/%2F%2F", trap, "/x"),
           std::string("/%2f%2fevil.example"),
           absl::StrCat("/http://", trap, "/x"),
           absl::StrCat("/x?url=http://", trap, "/&@evil.example"),
           absl::StrCat("/?@", trap),
           absl::StrCat("/:", trap_->port(), "/x"),
           absl::StrCat("/...;@", trap, "/"),
           std::string("/%40evil.example"),
       }) {
    ExpectForwardedAs(WithPath(target), replica, "/base" + target);
  }
  // Headers that proxies and frameworks use to pick a destination are
  // end-to-end headers here: forwarded, never followed.
  v1::ReadRequest request = WithPath("/h");
  for (const char* name :
       {"X-Forwarded-Host", "Forwarded", "X-Original-URL", "X-Rewrite-URL"}) {
    v1::Header* header = request.add_headers();
    header->set_name(name);
    header->set_value(absl::StrCat("http://", trap, "/x"));
  }
  ExpectForwardedAs(request, replica, "/base/h");
}

TEST_F(HostileDescriptorE2eTest, UpstreamNamesAreNeverAddresses) {
  Replica& replica = StartWithOneReplica();
  for (const std::string& upstream : std::vector<std::string>{
           absl::StrCat("http://", trap_address_), trap_address_,
           std::string("evil.example"), absl::StrCat("//", trap_address_),
           replica.url()}) {
    SCOPED_TRACE(upstream);
    v1::ReadRequest request = WithPath("/x");
    request.set_upstream(upstream);
    v1::ReadResponse response;
    const grpc::Status status = Read(request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND)
        << status.error_message();
    EXPECT_EQ(status.error_message(),
              absl::StrCat("unknown upstream \"", upstream, "\""));
  }
  EXPECT_EQ(replica.connections_accepted(), 0);
}

}  // namespace
}  // namespace tailgate::testing
