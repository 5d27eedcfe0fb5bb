// The --config file through the real binary: two named upstreams of
// loopback replicas, each read by ReadRequest.upstream, NOT_FOUND for an
// unknown one, per-upstream stats and metrics, flags over the file, and a
// bad file refused at start-up with one line and exit code 2.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/testing/http_get.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/process/child_process.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {
namespace {

using ::tailgate::server::testing::HttpGet;
using ::tailgate::server::testing::HttpReply;

// A file in the test's scratch directory.
std::string WriteFile(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(dir != nullptr ? dir : "/tmp", "/",
                                        name);
  std::ofstream(path) << text;
  return path;
}

class ConfigFileE2eTest : public TailgateE2eTest {
 protected:
  // Replicas answering with their set's name: two for "a", two for "b".
  std::string TwoUpstreams() {
    std::vector<std::string> urls;
    for (const char* set : {"a", "a", "b", "b"}) {
      urls.push_back(AddReplica(Always(Body(set))).url());
    }
    return absl::StrCat(
        "listen: \"127.0.0.1:1\"\n",  // the command line's wins
        "timeout: \"3s\"\n",
        "upstreams {\n  name: \"a\"\n  replicas: \"", urls[0],
        "\"\n  replicas: \"", urls[1],
        "\"\n  hedge_delay: \"40ms\"\n  hedge_burst: 5\n}\n",
        "upstreams {\n  name: \"b\"\n  replicas: \"", urls[2],
        "\"\n  replicas: \"", urls[3], "\"\n}\n");
  }

  grpc::Status ReadFrom(const std::string& upstream,
                        v1::ReadResponse* response) {
    v1::ReadRequest request;
    request.set_path("/x");
    request.set_upstream(upstream);
    return Read(request, response);
  }

  const v1::UpstreamStats* Find(const v1::GetStatsResponse& stats,
                                const std::string& name) {
    for (const v1::UpstreamStats& upstream : stats.upstreams()) {
      if (upstream.name() == name) return &upstream;
    }
    return nullptr;
  }
};

TEST_F(ConfigFileE2eTest, ReadsFromEachNamedUpstream) {
  const std::string config = WriteFile("two.textproto", TwoUpstreams());
  StartTailgateWithFlags({"--config=" + config, "--timeout=2s"});

  for (int i = 0; i < 3; ++i) {
    v1::ReadResponse response;
    grpc::Status status = ReadFrom("a", &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.body(), "a");
  }
  v1::ReadResponse response;
  grpc::Status status = ReadFrom("b", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.body(), "b");
  EXPECT_TRUE(absl::StrContains(response.trace().replica(),
                                replicas_[2]->url()) ||
              absl::StrContains(response.trace().replica(),
                                replicas_[3]->url()))
      << response.trace().replica();

  // The file has no default set.
  status = ReadFrom("", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "\"\""))
      << status.error_message();
  status = ReadFrom("nope", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "\"nope\""))
      << status.error_message();

  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.requests(), 4u);
  ASSERT_EQ(stats.upstreams_size(), 2);
  const v1::UpstreamStats* a = Find(stats, "a");
  const v1::UpstreamStats* b = Find(stats, "b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->requests(), 3u);
  EXPECT_EQ(b->requests(), 1u);
  EXPECT_EQ(a->hedge_delay().nanos(), 40'000'000);  // its own
  EXPECT_EQ(b->hedge_delay().nanos(), 25'000'000);  // --hedge_delay's default
  EXPECT_DOUBLE_EQ(a->hedge_credits(), 5);
  EXPECT_DOUBLE_EQ(b->hedge_credits(), 2);
  ASSERT_EQ(stats.replicas_size(), 4);
  for (const v1::ReplicaStats& replica : stats.replicas()) {
    const bool in_a = replica.url() == replicas_[0]->url() ||
                      replica.url() == replicas_[1]->url();
    EXPECT_EQ(replica.upstream(), in_a ? "a" : "b") << replica.url();
  }

  absl::StatusOr<HttpReply> metrics =
      HttpGet(tailgate_->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_TRUE(absl::StrContains(
      metrics->body, "tailgate_upstream_requests_total{upstream=\"a\"} 3"))
      << metrics->body;
  EXPECT_TRUE(absl::StrContains(
      metrics->body, absl::StrCat("tailgate_circuit_state{upstream=\"b\","
                                  "replica=\"",
                                  replicas_[2]->url(), "\"} 0")))
      << metrics->body;

  // --timeout on the command line beat the file's 3s.
  const std::optional<std::string> start =
      tailgate_->WaitForLine("event=start", kWait);
  ASSERT_TRUE(start.has_value());
  EXPECT_TRUE(absl::StrContains(*start, " timeout=2s ")) << *start;
  EXPECT_TRUE(tailgate_->WaitForLine("event=upstream", kWait).has_value());
}

TEST_F(ConfigFileE2eTest, BackendsMakeTheDefaultSetBesideTheFilesSets) {
  const std::string config = WriteFile("default.textproto", TwoUpstreams());
  Replica& fallback = AddReplica(Always(Body("default")));
  StartTailgateWithFlags(
      {"--config=" + config, "--backends=" + fallback.url()});
  v1::ReadResponse response;
  grpc::Status status = ReadFrom("", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.body(), "default");
  status = ReadFrom("b", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.body(), "b");
  EXPECT_EQ(Stats().upstreams_size(), 3);
}

// Runs tailgate with `flag` to its exit; its exit code and stderr.
std::pair<int, std::string> RunTailgateToExit(const std::string& flag) {
  ChildOptions options;
  options.argv = {TailgateBinary(), flag};
  options.stderr_to = Output::Capture();
  absl::StatusOr<ChildResult> run = RunToExit(std::move(options), kWait);
  if (!run.ok()) return {-1, run.status().ToString()};
  return {run->exit_code, run->stderr_text};
}

TEST(ConfigFileStartTest, BadFileStopsStartUpWithOneLineAndExitCode2) {
  const std::string path = WriteFile(
      "bad.textproto",
      "upstreams {\n  name: \"a\"\n  replicas: \"http://127.0.0.1:1\"\n"
      "  hedge_fraction: 1.5\n}\n");
  const auto [code, text] = RunTailgateToExit("--config=" + path);
  EXPECT_EQ(code, 2);
  EXPECT_EQ(text, absl::StrCat(path,
                               ":4:3: upstreams.a.hedge_fraction: must be in "
                               "[0, 1], got 1.5\n"));

  const std::string syntax =
      WriteFile("syntax.textproto", "upstreams {\n  name: \"a\"\n");
  const auto [syntax_code, syntax_text] =
      RunTailgateToExit("--config=" + syntax);
  EXPECT_EQ(syntax_code, 2);
  EXPECT_TRUE(absl::StartsWith(syntax_text, syntax + ":3:")) << syntax_text;
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(syntax_text, '\n')).size(),
            2u)
      << syntax_text;
}

}  // namespace
}  // namespace tailgate::testing
