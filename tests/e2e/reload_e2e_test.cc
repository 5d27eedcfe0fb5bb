// Reload and DNS discovery through the real binary: a config of two
// upstreams, one of them a name resolving to three loopback addresses
// (127.0.0.2-4, one port, as the pods behind a headless Service), read at
// a steady rate while one static replica is swapped by rewriting the
// config file and one address by changing the name's answer. No read may
// fail, the newcomers must take reads, the leavers none after the change,
// and stats and metrics must label discovered replicas NAME@ADDRESS.
//
// Names resolve through the sidecar's testing seam: the
// TAILGATE_TESTING_HOSTS_FILE variable points its resolver at a
// hosts-format file this test rewrites (never the system's DNS).

#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/testing/http_get.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {
namespace {

using ::tailgate::server::testing::HttpGet;
using ::tailgate::server::testing::HttpReply;

std::string TestDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : ".";
}

// Replaced whole, as a writer that renames a new file over the old one.
void Replace(const std::string& path, const std::string& text) {
  const std::string temp = path + ".new";
  std::ofstream(temp, std::ios::trunc) << text;
  ASSERT_EQ(std::rename(temp.c_str(), path.c_str()), 0) << path;
}

// Reads one upstream in a loop, one at a time, until stopped.
class SteadyReader {
 public:
  SteadyReader(v1::HedgedRead::Stub* stub, std::string upstream)
      : stub_(stub), upstream_(std::move(upstream)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~SteadyReader() { Stop(); }

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int64_t reads() const { return reads_; }
  int64_t failures() const { return failures_; }
  int64_t misrouted() const { return misrouted_; }
  std::string first_failure() const { return first_failure_; }

 private:
  void Run() {
    while (!stop_) {
      v1::ReadRequest request;
      request.set_path("/x");
      request.set_upstream(upstream_);
      v1::ReadResponse response;
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
      const grpc::Status status = stub_->Read(&context, request, &response);
      ++reads_;
      // A discovered replica "dN" listens on 127.0.0.N: the trace's
      // NAME@ADDRESS must be where the answer came from.
      if (status.ok() && upstream_ == "disc" &&
          response.trace().replica() !=
              absl::StrCat("disc.test@127.0.0.", response.body().substr(1))) {
        ++misrouted_;
      }
      if (!status.ok() || response.status() != 200) {
        if (failures_++ == 0) {
          first_failure_ = absl::StrCat(status.error_code(), " ",
                                        status.error_message(), " http ",
                                        response.status());
        }
      }
      // A steady pace: about 250 reads a second per reader.
      absl::SleepFor(absl::Milliseconds(4));
    }
  }

  v1::HedgedRead::Stub* const stub_;
  const std::string upstream_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> reads_{0};
  std::atomic<int64_t> failures_{0};
  std::atomic<int64_t> misrouted_{0};
  std::string first_failure_;  // written by the reader thread before Stop
  std::thread thread_;
};

class ReloadE2eTest : public TailgateE2eTest {
 protected:
  // A replica on `address`:`port` answering its own name.
  Replica& Named(const std::string& name, const std::string& address = "127.0.0.1",
                 int port = 0) {
    ReplicaOptions options;
    options.address = address;
    options.port = port;
    absl::StatusOr<std::unique_ptr<Replica>> replica =
        Replica::Start(Always(Body(name)), options);
    EXPECT_TRUE(replica.ok()) << replica.status();
    replicas_.push_back(*std::move(replica));
    return *replicas_.back();
  }

  std::string Config(const std::vector<Replica*>& fixed, int dns_port) {
    std::string text = "upstreams {\n  name: \"static\"\n";
    for (Replica* replica : fixed) {
      absl::StrAppend(&text, "  replicas: \"", replica->url(), "\"\n");
    }
    return absl::StrCat(text,
                        "}\nupstreams {\n  name: \"disc\"\n"
                        "  replicas: \"http://disc.test:", dns_port,
                        "\"\n  resolve: true\n"
                        "  refresh_interval: \"100ms\"\n}\n");
  }

  const v1::UpstreamStats* Upstream(const v1::GetStatsResponse& stats,
                                    const std::string& name) {
    for (const v1::UpstreamStats& upstream : stats.upstreams()) {
      if (upstream.name() == name) return &upstream;
    }
    return nullptr;
  }

  std::vector<std::string> DiscLabels(const v1::GetStatsResponse& stats) {
    std::vector<std::string> labels;
    for (const v1::ReplicaStats& replica : stats.replicas()) {
      if (replica.upstream() == "disc") labels.push_back(replica.url());
    }
    return labels;
  }
};

TEST_F(ReloadE2eTest, ReplicasComeAndGoUnderLoadWithoutAFailedRead) {
  Replica& s1 = Named("s1");
  Replica& s2 = Named("s2");
  Replica& s3 = Named("s3");  // joins with the reload
  Replica& d2 = Named("d2", "127.0.0.2");
  const int port = d2.port();
  Replica& d3 = Named("d3", "127.0.0.3", port);
  Replica& d4 = Named("d4", "127.0.0.4", port);
  Replica& d5 = Named("d5", "127.0.0.5", port);  // joins with the new answer

  const std::string hosts = TestDir() + "/hosts";
  Replace(hosts, "127.0.0.2 disc.test\n127.0.0.3 disc.test\n"
                 "127.0.0.4 disc.test\n");
  const std::string config_dir = TestDir() + "/config";
  mkdir(config_dir.c_str(), 0700);
  const std::string config = config_dir + "/sidecar.textproto";
  Replace(config, Config({&s1, &s2}, port));

  absl::StatusOr<std::unique_ptr<TailgateProcess>> process =
      TailgateProcess::Start(TailgateBinary(), {"--config=" + config},
                             {absl::StrCat("TAILGATE_TESTING_HOSTS_FILE=",
                                           hosts)});
  ASSERT_TRUE(process.ok()) << process.status();
  AdoptTailgate(*std::move(process));

  // Three replicas from one name, each labelled NAME@ADDRESS; attempts
  // keep the name in Host.
  v1::GetStatsResponse stats = Stats();
  ASSERT_NE(Upstream(stats, "disc"), nullptr);
  EXPECT_EQ(Upstream(stats, "disc")->replicas(), 3u);
  EXPECT_EQ(DiscLabels(stats),
            (std::vector<std::string>{"disc.test@127.0.0.2",
                                      "disc.test@127.0.0.3",
                                      "disc.test@127.0.0.4"}));

  const absl::Time started = absl::Now();
  SteadyReader fixed(reads_.get(), "static");
  SteadyReader discovered(reads_.get(), "disc");
  for (Replica* replica : {&s1, &s2, &d2, &d3, &d4}) {
    ASSERT_TRUE(replica->WaitForRequests(5, kWait)) << replica->url();
  }
  bool host_is_the_name = false;
  for (const ReplicaRequest& request : d3.requests()) {
    for (const auto& [name, value] : request.headers) {
      if (name == "Host" && value == absl::StrCat("disc.test:", port)) {
        host_is_the_name = true;
      }
    }
  }
  EXPECT_TRUE(host_is_the_name);

  // 1. The config file: s2 leaves, s3 joins.
  Replace(config, Config({&s1, &s3}, port));
  ASSERT_TRUE(
      tailgate_->WaitForLine("event=config_reload result=ok", kWait).has_value())
      << tailgate_->stderr_text();
  ASSERT_TRUE(s3.WaitForRequests(20, kWait));
  const int64_t s2_after_reload = s2.requests_received();

  // 2. The name's answer: 127.0.0.2 leaves, 127.0.0.5 joins.
  Replace(hosts, "127.0.0.3 disc.test\n127.0.0.4 disc.test\n"
                 "127.0.0.5 disc.test\n");
  ASSERT_TRUE(d5.WaitForRequests(20, kWait));
  const int64_t d2_after_answer = d2.requests_received();

  // More reads on the new sets, then stop.
  ASSERT_TRUE(s3.WaitForRequests(s3.requests_received() + 50, kWait));
  ASSERT_TRUE(d5.WaitForRequests(d5.requests_received() + 50, kWait));
  fixed.Stop();
  discovered.Stop();
  const absl::Duration elapsed = absl::Now() - started;

  EXPECT_EQ(fixed.failures(), 0) << fixed.first_failure();
  EXPECT_EQ(discovered.failures(), 0) << discovered.first_failure();
  EXPECT_EQ(discovered.misrouted(), 0);  // each address its own connections
  EXPECT_EQ(s2.requests_received(), s2_after_reload);  // drained, never again
  EXPECT_EQ(d2.requests_received(), d2_after_answer);
  std::printf(
      "reload under load: %lld reads in %s (%.0f/s), %lld failed; "
      "static s1=%lld s2=%lld (left) s3=%lld (joined); "
      "disc 127.0.0.2=%lld (left) .3=%lld .4=%lld .5=%lld (joined)\n",
      static_cast<long long>(fixed.reads() + discovered.reads()),
      absl::FormatDuration(elapsed).c_str(),
      static_cast<double>(fixed.reads() + discovered.reads()) /
          absl::ToDoubleSeconds(elapsed),
      static_cast<long long>(fixed.failures() + discovered.failures()),
      static_cast<long long>(s1.requests_received()),
      static_cast<long long>(s2.requests_received()),
      static_cast<long long>(s3.requests_received()),
      static_cast<long long>(d2.requests_received()),
      static_cast<long long>(d3.requests_received()),
      static_cast<long long>(d4.requests_received()),
      static_cast<long long>(d5.requests_received()));

  stats = Stats();
  EXPECT_EQ(DiscLabels(stats),
            (std::vector<std::string>{"disc.test@127.0.0.3",
                                      "disc.test@127.0.0.4",
                                      "disc.test@127.0.0.5"}));
  EXPECT_EQ(stats.config_reloads(), 1u);
  for (const v1::ReplicaStats& replica : stats.replicas()) {
    if (replica.upstream() == "disc") {
      EXPECT_EQ(replica.url(), absl::StrCat("disc.test@", replica.address()));
    }
  }
  absl::StatusOr<HttpReply> metrics =
      HttpGet(tailgate_->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_TRUE(absl::StrContains(
      metrics->body, "tailgate_config_reloads_total{result=\"ok\"} 1"))
      << metrics->body;
  EXPECT_TRUE(absl::StrContains(
      metrics->body,
      "tailgate_circuit_state{upstream=\"disc\",replica=\"disc.test@127.0.0.5\"} 0"))
      << metrics->body;
  EXPECT_TRUE(absl::StrContains(
      metrics->body, "tailgate_upstream_replicas{upstream=\"disc\"} 3"))
      << metrics->body;
}

TEST_F(ReloadE2eTest, BadFileAndFailedLookupKeepTheRunningSets) {
  Replica& s1 = Named("s1");
  Replica& d2 = Named("d2", "127.0.0.2");
  const std::string hosts = TestDir() + "/hosts-bad";
  Replace(hosts, "127.0.0.2 disc.test\n");
  const std::string config_dir = TestDir() + "/config-bad";
  mkdir(config_dir.c_str(), 0700);
  const std::string config = config_dir + "/sidecar.textproto";
  Replace(config, Config({&s1}, d2.port()));
  absl::StatusOr<std::unique_ptr<TailgateProcess>> process =
      TailgateProcess::Start(TailgateBinary(), {"--config=" + config},
                             {absl::StrCat("TAILGATE_TESTING_HOSTS_FILE=",
                                           hosts)});
  ASSERT_TRUE(process.ok()) << process.status();
  AdoptTailgate(*std::move(process));

  // A bad file: the start-up line in the log, counted, nothing changes.
  Replace(config, "upstreams {\n  name: \"static\"\n  replicas: \"" +
                      s1.url() + "\"\n  hedge_fraction: 1.5\n}\n");
  const std::optional<std::string> rejected =
      tailgate_->WaitForLine("result=rejected", kWait);
  ASSERT_TRUE(rejected.has_value()) << tailgate_->stderr_text();
  EXPECT_TRUE(absl::StrContains(
      *rejected, absl::StrCat(config, ":4:3: upstreams.static.hedge_fraction: "
                                      "must be in [0, 1], got 1.5")))
      << *rejected;
  // The name stops resolving: the last good address stays.
  Replace(hosts, "127.0.0.9 other.test\n");
  const absl::Time deadline = absl::Now() + kWait;
  v1::GetStatsResponse stats = Stats();
  while (stats.dns_refresh_failures() < 2 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));  // polls a counter, not a policy
    stats = Stats();
  }
  EXPECT_GE(stats.dns_refresh_failures(), 2u);
  EXPECT_EQ(stats.config_reloads_rejected(), 1u);
  EXPECT_EQ(stats.config_reloads(), 0u);
  EXPECT_EQ(Upstream(stats, "disc")->replicas(), 1u);
  for (const std::string upstream : {"static", "disc"}) {
    v1::ReadRequest request;
    request.set_path("/x");
    request.set_upstream(upstream);
    v1::ReadResponse response;
    const grpc::Status status = Read(request, &response);
    ASSERT_TRUE(status.ok()) << upstream << ": " << status.error_message();
    EXPECT_EQ(response.body(), upstream == "static" ? "s1" : "d2");
  }

  // SIGHUP reloads even an unchanged file (once it is good again).
  Replace(config, Config({&s1}, d2.port()));
  ASSERT_TRUE(tailgate_->WaitForLine("event=config_reload result=ok", kWait)
                  .has_value());
  tailgate_->Signal(SIGHUP);
  while (Stats().config_reloads() < 2 && absl::Now() < deadline + kWait) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(Stats().config_reloads(), 2u);
  absl::StatusOr<HttpReply> metrics =
      HttpGet(tailgate_->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_TRUE(absl::StrContains(
      metrics->body, "tailgate_config_reloads_total{result=\"rejected\"} 1"))
      << metrics->body;
  EXPECT_TRUE(absl::StrContains(
      metrics->body, "tailgate_dns_refresh_failures_total{upstream=\"disc\"}"))
      << metrics->body;
}

}  // namespace
}  // namespace tailgate::testing
