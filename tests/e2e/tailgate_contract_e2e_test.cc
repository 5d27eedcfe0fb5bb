// End-to-end contract tests through the real tailgate binary: the gRPC
// status mapping (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNAVAILABLE), the
// /metrics text against GetStats and promtool, health and reflection.

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/testing/async_read.h"
#include "server/testing/http_get.h"
#include "server/testing/raw_grpc.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/process/child_process.h"
#include "tests/replica/replica.h"
#include "tests/replica/silent_listener.h"

namespace tailgate::testing {
namespace {

using ::tailgate::server::testing::AsyncRead;
using ::tailgate::server::testing::HealthCheck;
using ::tailgate::server::testing::HttpGet;
using ::tailgate::server::testing::HttpReply;
using ::tailgate::server::testing::kServing;
using ::tailgate::server::testing::ReflectionListServices;

// The sum over all label sets of the samples of `name` in Prometheus text.
double SumOfSamples(absl::string_view text, absl::string_view name) {
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const size_t name_end = line.find_first_of("{ ");
    if (name_end == absl::string_view::npos) continue;
    if (line.substr(0, name_end) != name) continue;
    const size_t value_start = line.rfind(' ');
    double value = 0;
    EXPECT_TRUE(absl::SimpleAtod(line.substr(value_start + 1), &value)) << line;
    sum += value;
  }
  return sum;
}

std::string Metrics(int port) {
  absl::StatusOr<HttpReply> reply = HttpGet(port, "/metrics");
  EXPECT_TRUE(reply.ok()) << reply.status();
  if (!reply.ok()) return "";
  EXPECT_EQ(reply->status, 200);
  return reply->body;
}

bool Contains(const std::vector<std::string>& names, absl::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

struct InvalidCase {
  std::string label;
  v1::ReadRequest request;
  std::string prefix;  // the message starts with it: the field
};

std::vector<InvalidCase> InvalidCases() {
  std::vector<InvalidCase> cases;
  auto path_case = [&cases](std::string label, std::string path,
                            std::string prefix) {
    InvalidCase c{std::move(label), {}, std::move(prefix)};
    c.request.set_path(std::move(path));
    cases.push_back(std::move(c));
  };
  path_case("no leading slash", "no-slash", "path must start with \"/\"");
  path_case("absolute-form", "http://x/y", "path must start with \"/\"");
  path_case("CR in path", "/a\rb", "path contains a control character");
  path_case("LF in path", "/a\nb", "path contains a control character");
  path_case("NUL in path", std::string("/a\0b", 4),
            "path contains a control character");
  path_case("space in path", "/a b", "path contains a space");
  path_case("# in path", "/a#b", "path contains \"#\"");

  auto header_case = [&cases](std::string label, std::string name,
                              std::string value, std::string prefix) {
    InvalidCase c{std::move(label), {}, std::move(prefix)};
    c.request.set_path("/ok");
    v1::Header* header = c.request.add_headers();
    header->set_name(std::move(name));
    header->set_value(std::move(value));
    cases.push_back(std::move(c));
  };
  header_case("name not a token", "Bad Name", "v", "headers[0].name ");
  header_case("name with colon", "X-A:", "v", "headers[0].name ");
  header_case("CR in value", "X-A", "a\rb", "headers[0].value ");
  header_case("LF in value", "X-A", "a\nb", "headers[0].value ");
  for (const char* name :
       {"Host", "Content-Length", "Transfer-Encoding", "Expect"}) {
    header_case(name, name, "1",
                absl::StrCat("headers[0] \"", name, "\" is not allowed"));
  }
  header_case("lowercase host", "host", "example.com",
              "headers[0] \"host\" is not allowed");

  InvalidCase method{"method out of range", {}, "method has unknown value 7"};
  method.request.set_path("/ok");
  method.request.set_method(static_cast<v1::Method>(7));
  cases.push_back(std::move(method));

  InvalidCase negative{
      "negative hedge.delay", {}, "hedge.delay must not be negative"};
  negative.request.set_path("/ok");
  negative.request.mutable_hedge()->mutable_delay()->set_seconds(-1);
  cases.push_back(std::move(negative));

  InvalidCase mixed_sign{
      "hedge.delay with mixed signs", {}, "hedge.delay is not a valid"};
  mixed_sign.request.set_path("/ok");
  mixed_sign.request.mutable_hedge()->mutable_delay()->set_seconds(1);
  mixed_sign.request.mutable_hedge()->mutable_delay()->set_nanos(-1);
  cases.push_back(std::move(mixed_sign));
  return cases;
}

TEST_F(TailgateE2eTest, EveryInvalidArgumentClassNamesTheField) {
  Replica& replica = AddReplica(Always(Body("ok")));
  StartTailgate();
  const std::vector<InvalidCase> cases = InvalidCases();
  for (const InvalidCase& c : cases) {
    SCOPED_TRACE(c.label);
    v1::ReadResponse response;
    const grpc::Status status = Read(c.request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << status.error_message();
    EXPECT_TRUE(absl::StartsWith(status.error_message(), c.prefix))
        << status.error_message();
    EXPECT_FALSE(absl::StrContains(status.error_message(), replica.url()))
        << status.error_message();
    EXPECT_FALSE(
        absl::StrContains(status.error_message(), absl::StrCat(replica.port())))
        << status.error_message();
  }
  EXPECT_EQ(replica.requests_received(), 0);
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.rejected(), cases.size());
  EXPECT_EQ(stats.requests(), 0u);
  EXPECT_TRUE(absl::StrContains(
      Metrics(tailgate_->metrics_port()),
      absl::StrCat("tailgate_rejected_total{reason=\"invalid_argument\"} ",
                   cases.size(), "\n")));
}

TEST_F(TailgateE2eTest, OverloadIsRefusedAtOnceWithoutQueueing) {
  Replica& replica = AddReplica(Always(Body("late", absl::Seconds(5))));
  StartTailgate({"--max_requests=2", "--timeout=3s", "--hedge_fraction=0"});
  std::array<AsyncRead, 2> slow;
  absl::Cleanup finish_slow = [&slow] {
    for (AsyncRead& call : slow) {
      call.context.TryCancel();
      EXPECT_TRUE(call.Wait());
    }
  };
  for (AsyncRead& call : slow) {
    call.request.set_path("/slow");
    call.context.set_deadline(
        absl::ToChronoTime(absl::Now() + absl::Seconds(3)));
    call.Start(*reads_);
  }
  // Both reads admitted: GetStats reports them in flight.
  const absl::Time give_up = absl::Now() + kWait;
  int64_t in_flight = 0;
  while ((in_flight = Stats().in_flight()) < 2 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_EQ(in_flight, 2);

  v1::ReadResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status refused = Read("/slow", &response);
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.error_message();
  EXPECT_LT(took, absl::Milliseconds(500));
  EXPECT_FALSE(absl::StrContains(refused.error_message(), replica.url()))
      << refused.error_message();
  EXPECT_TRUE(
      absl::StrContains(Metrics(tailgate_->metrics_port()),
                        "tailgate_rejected_total{reason=\"overloaded\"} 1\n"));
  EXPECT_EQ(Stats().rejected(), 1u);
  EXPECT_LE(replica.requests_received(), 2);

  std::move(finish_slow).Invoke();
  for (const AsyncRead& call : slow) EXPECT_FALSE(call.status.ok());
}

TEST_F(TailgateE2eTest, StreamsPerConnectionAreCappedAtTheFront) {
  // The replica notes when each request arrives and answers 300 ms later.
  // (Shared: the replica, and its handler, outlive the test body.)
  struct Arrivals {
    absl::Mutex mu;
    std::vector<absl::Time> times ABSL_GUARDED_BY(mu);
  };
  auto seen = std::make_shared<Arrivals>();
  AddReplica([seen](const ReplicaRequest&) {
    absl::MutexLock lock(&seen->mu);
    seen->times.push_back(absl::Now());
    return Body("ok", absl::Milliseconds(300));
  });
  StartTailgate(
      {"--max_streams_per_connection=2", "--hedge_fraction=0", "--timeout=3s"});
  std::array<AsyncRead, 3> calls;
  // On an early return, the calls must end before `calls` goes away.
  absl::Cleanup end_calls = [&calls] {
    for (AsyncRead& call : calls) {
      call.context.TryCancel();
      call.Wait();
    }
  };
  for (AsyncRead& call : calls) {
    call.request.set_path("/capped");
    call.context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
    call.Start(*reads_);
  }
  for (AsyncRead& call : calls) {
    ASSERT_TRUE(call.Wait());
    EXPECT_TRUE(call.status.ok()) << call.status.error_message();
  }
  // Two calls fit on the connection; the third waited on the client's side
  // (not refused) until one of them had been answered.
  absl::MutexLock lock(&seen->mu);
  std::vector<absl::Time>& arrivals = seen->times;
  ASSERT_EQ(arrivals.size(), 3u);
  std::sort(arrivals.begin(), arrivals.end());
  EXPECT_GE(arrivals[2] - arrivals[0], absl::Milliseconds(250));
}

TEST_F(TailgateE2eTest, OversizedResponseIsResourceExhaustedNamingTheLimit) {
  Replica& replica = AddReplica(Always(Body(std::string(2048, 'x'))));
  StartTailgate({"--max_response_bytes=1024", "--hedge_fraction=0"});
  v1::ReadResponse response;
  const grpc::Status status = Read("/big", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "max_response_bytes"))
      << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "1024"))
      << status.error_message();
  EXPECT_FALSE(absl::StrContains(status.error_message(), "127.0.0.1"))
      << status.error_message();
  EXPECT_FALSE(
      absl::StrContains(status.error_message(), absl::StrCat(replica.port())))
      << status.error_message();
  EXPECT_EQ(replica.requests_received(), 1);
}

// Two replicas: "/hedge" is slow on the first, "/fail" is a 500 on both,
// "/missing" a 404 on both, anything else a 200.
Handler MixHandler(bool slow_hedge) {
  return [slow_hedge](const ReplicaRequest& request) {
    if (request.uri == "/hedge") {
      return Body("hedge",
                  slow_hedge ? absl::Milliseconds(600) : absl::ZeroDuration());
    }
    ReplicaResponse response = Body("ok");
    if (request.uri == "/fail") response.status = 500;
    if (request.uri == "/missing") response.status = 404;
    return response;
  };
}

// Reads of every kind against two MixHandler replicas.
void ReadTheMix(const std::function<grpc::Status(const std::string&,
                                                 v1::ReadResponse*)>& read) {
  for (const char* path : {"/ok", "/ok", "/hedge", "/hedge", "/hedge", "/hedge",
                           "/missing", "/missing", "/fail"}) {
    SCOPED_TRACE(path);
    v1::ReadResponse response;
    const grpc::Status status = read(path, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
  }
}

// Two MixHandler replicas behind a sidecar that hedges freely and never
// opens a circuit, with the mix read through it.
class MixE2eTest : public TailgateE2eTest {
 protected:
  void ServeAndReadTheMix() {
    AddReplica(MixHandler(/*slow_hedge=*/true));
    AddReplica(MixHandler(/*slow_hedge=*/false));
    StartTailgate({"--hedge_delay=20ms", "--timeout=3s", "--hedge_fraction=1",
                   "--hedge_burst=10", "--failure_threshold=100"});
    ReadTheMix([this](const std::string& path, v1::ReadResponse* response) {
      return Read(path, response);
    });
  }
};

TEST_F(MixE2eTest, MetricsOverHttpAgreeWithGetStats) {
  ASSERT_NO_FATAL_FAILURE(ServeAndReadTheMix());
  const v1::GetStatsResponse stats = Stats();
  const std::string metrics = Metrics(tailgate_->metrics_port());
  ASSERT_EQ(Stats().attempts(), stats.attempts()) << "still changing";

  EXPECT_EQ(stats.requests(), 9u);
  // Whether a hedge wins the mix depends on the host's timing (under the
  // sanitizers often none does); the counts, whatever they are, must agree.
  EXPECT_GE(stats.hedges(), 1u);
  EXPECT_GE(stats.backend_failures(), 1u);
  EXPECT_EQ(SumOfSamples(metrics, "tailgate_requests_total"), stats.requests());
  EXPECT_EQ(SumOfSamples(metrics, "tailgate_hedges_total"), stats.hedges());
  EXPECT_EQ(SumOfSamples(metrics, "tailgate_hedge_wins_total"),
            stats.hedge_wins());
  EXPECT_EQ(SumOfSamples(metrics, "tailgate_attempts_total"), stats.attempts());
  EXPECT_EQ(SumOfSamples(metrics, "tailgate_backend_failures_total"),
            stats.backend_failures());
  EXPECT_EQ(SumOfSamples(metrics, "tailgate_timeouts_total"), stats.timeouts());
  EXPECT_EQ(SumOfSamples(metrics, "tailgate_rejected_total"), stats.rejected());
}

TEST_F(MixE2eTest, LiveMetricsPassPromtool) {
  ASSERT_NO_FATAL_FAILURE(ServeAndReadTheMix());
  const std::string metrics = Metrics(tailgate_->metrics_port());
  ASSERT_FALSE(metrics.empty());

  const char* tmpdir = std::getenv("TEST_TMPDIR");
  const std::string file =
      absl::StrCat(tmpdir != nullptr ? tmpdir : "/tmp", "/metrics.txt");
  {
    std::ofstream out(file, std::ios::binary);
    out << metrics;
    ASSERT_TRUE(out.good());
  }
  ChildOptions promtool;
  promtool.argv = {"/usr/bin/promtool", "check", "metrics"};
  promtool.stdin_from = Output::File(file);
  promtool.stdout_to = Output::Capture();
  promtool.stderr_to = Output::SameAsStdout();
  absl::StatusOr<ChildResult> run = RunToExit(std::move(promtool), kWait);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->exit_code, 0) << "promtool said:\n"
                               << run->stdout_text << "\nmetrics:\n"
                               << metrics;
}

TEST_F(TailgateE2eTest, HealthAndReflectionThroughTheBinary) {
  AddReplica(Always(Body("ok")));
  StartTailgate();
  EXPECT_EQ(HealthCheck(channel_, "").value_or(-1), kServing);
  EXPECT_EQ(HealthCheck(channel_, "tailgate.v1.HedgedRead").value_or(-1),
            kServing);

  absl::StatusOr<std::vector<std::string>> main_services =
      ReflectionListServices(channel_);
  ASSERT_TRUE(main_services.ok()) << main_services.status();
  EXPECT_TRUE(Contains(*main_services, "tailgate.v1.HedgedRead"))
      << absl::StrJoin(*main_services, ",");
  EXPECT_FALSE(Contains(*main_services, "tailgate.v1.Admin"))
      << absl::StrJoin(*main_services, ",");

  absl::StatusOr<std::vector<std::string>> admin_services =
      ReflectionListServices(admin_channel_);
  ASSERT_TRUE(admin_services.ok()) << admin_services.status();
  EXPECT_TRUE(Contains(*admin_services, "tailgate.v1.Admin"))
      << absl::StrJoin(*admin_services, ",");
  EXPECT_FALSE(Contains(*admin_services, "tailgate.v1.HedgedRead"))
      << absl::StrJoin(*admin_services, ",");
}

TEST_F(TailgateE2eTest, RefusedConnectionsAreUnavailableWithoutTransportText) {
  absl::StatusOr<int> first = RefusingLoopbackPort();
  absl::StatusOr<int> second = RefusingLoopbackPort();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  StartTailgateWithBackends({absl::StrCat("http://127.0.0.1:", *first),
                             absl::StrCat("http://127.0.0.1:", *second)},
                            {"--timeout=2s"});
  v1::ReadResponse response;
  const grpc::Status status = Read("/x", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << status.error_message();
  const std::string message = status.error_message();
  EXPECT_FALSE(message.empty());
  for (const std::string& forbidden :
       {std::string("refused"), std::string("Refused"),
        std::string("127.0.0.1"), std::string("curl"), std::string("Couldn't"),
        absl::StrCat(*first), absl::StrCat(*second)}) {
    EXPECT_FALSE(absl::StrContains(message, forbidden))
        << forbidden << " in: " << message;
  }
  EXPECT_GE(Stats().backend_failures(), 1u);
}

}  // namespace
}  // namespace tailgate::testing
