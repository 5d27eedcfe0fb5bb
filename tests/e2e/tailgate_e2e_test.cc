// End-to-end: the real tailgate binary, real loopback replicas, real gRPC
// and HTTP clients.

#include <dirent.h>
#include <grpcpp/grpcpp.h>
#include <sched.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "cpus/cpu_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/testing/async_read.h"
#include "server/testing/http_get.h"
#include "server/testing/raw_grpc.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/process/tailgate_process.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {
namespace {

using ::tailgate::server::testing::AsyncRead;
using ::tailgate::server::testing::HealthCheck;
using ::tailgate::server::testing::HttpGet;
using ::tailgate::server::testing::HttpReply;
using ::tailgate::server::testing::kNotServing;
using ::tailgate::server::testing::kServing;

TEST_F(TailgateE2eTest, LogsStartAndEachBoundAddress) {
  AddReplica(Always(Body("ok")));
  StartTailgate();
  const std::optional<std::string> start =
      tailgate_->WaitForLine("event=start", kWait);
  ASSERT_TRUE(start.has_value());
  EXPECT_TRUE(absl::StrContains(
      *start, absl::StrCat("backends=", replicas_[0]->url(), " ")));
  EXPECT_TRUE(absl::StrContains(*start, "hedge_delay=25ms"));
  EXPECT_TRUE(absl::StrContains(*start, "level=info"));
  EXPECT_TRUE(absl::StartsWith(*start, "ts="));
  EXPECT_FALSE(absl::EndsWith(tailgate_->grpc_address(), ":0"));
}

TEST_F(TailgateE2eTest, ReadsThroughToAReplica) {
  Replica& replica = AddReplica([](const ReplicaRequest& request) {
    ReplicaResponse response = Body(absl::StrCat("hello ", request.uri));
    response.headers = {{"X-Replica", "a"}};
    return response;
  });
  StartTailgate();
  v1::ReadRequest request;
  request.set_path("/p/a%2Fb?q=1");
  v1::Header* header = request.add_headers();
  header->set_name("X-Request-Id");
  header->set_value("42");
  v1::ReadResponse response;
  const grpc::Status status = Read(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.status(), 200);
  EXPECT_EQ(response.body(), "hello /p/a%2Fb?q=1");
  bool has_header = false;
  for (const v1::Header& h : response.headers()) {
    // Names come back in lower case, whatever the replica's capitalisation.
    has_header |= h.name() == "x-replica" && h.value() == "a";
  }
  EXPECT_TRUE(has_header);
  EXPECT_EQ(response.trace().attempts(), 1u);
  EXPECT_FALSE(response.trace().hedged());
  EXPECT_EQ(response.trace().replica(), replica.url());
  EXPECT_TRUE(response.trace().has_latency());

  ASSERT_EQ(replica.requests().size(), 1u);
  const ReplicaRequest seen = replica.requests()[0];
  EXPECT_EQ(seen.method, "GET");
  EXPECT_EQ(seen.uri, "/p/a%2Fb?q=1");
  bool forwarded = false;
  for (const auto& [name, value] : seen.headers) {
    forwarded |= name == "X-Request-Id" && value == "42";
  }
  EXPECT_TRUE(forwarded);
}

TEST_F(TailgateE2eTest, HeadReachesTheReplicaAsHead) {
  Replica& replica = AddReplica(Always(Body("ignored")));
  StartTailgate();
  v1::ReadRequest request;
  request.set_path("/h");
  request.set_method(v1::METHOD_HEAD);
  v1::ReadResponse response;
  ASSERT_TRUE(Read(request, &response).ok());
  EXPECT_EQ(response.body(), "");
  EXPECT_EQ(replica.requests().at(0).method, "HEAD");
}

TEST_F(TailgateE2eTest, UpstreamHttpErrorIsAnOkCall) {
  ReplicaResponse not_found = Body("gone");
  not_found.status = 404;
  AddReplica(Always(not_found));
  StartTailgate();
  v1::ReadResponse response;
  ASSERT_TRUE(Read("/x", &response).ok());
  EXPECT_EQ(response.status(), 404);
  EXPECT_EQ(response.body(), "gone");
}

TEST_F(TailgateE2eTest, EjectionIsLoggedAndReported) {
  // The last serving replica of a set is never ejected: one failing
  // replica next to a healthy one, which the first read starts on (equal
  // costs go by rotation, from the first).
  ReplicaResponse broken = Body("down");
  broken.status = 500;
  Replica& failing = AddReplica(Always(broken));
  Replica& healthy = AddReplica(Always(Body("up")));
  StartTailgate(
      {"--failure_threshold=1", "--cooldown=60s", "--hedge_fraction=0"});
  v1::ReadResponse response;
  ASSERT_TRUE(Read("/x", &response).ok());
  // Its 500 is a failure: the fallback (on the retry budget, which
  // --hedge_fraction does not touch) answers.
  EXPECT_EQ(response.status(), 200);
  EXPECT_EQ(response.body(), "up");
  EXPECT_EQ(response.trace().attempts(), 2u);
  EXPECT_TRUE(response.trace().hedge_won());
  EXPECT_EQ(response.trace().replica(), healthy.url());
  EXPECT_EQ(failing.requests_received(), 1);

  const std::optional<std::string> line =
      tailgate_->WaitForLine("event=replica_state", kWait);
  ASSERT_TRUE(line.has_value()) << tailgate_->stderr_text();
  EXPECT_TRUE(absl::StrContains(*line, "level=warn")) << *line;
  EXPECT_TRUE(absl::StrContains(
      *line, absl::StrCat("upstream=\"\" replica=", failing.url(),
                          " from=serving to=ejected reason=consecutive "
                          "ejected_for=1m generation=1")))
      << *line;
  const v1::GetStatsResponse stats = Stats();
  ASSERT_EQ(stats.replicas_size(), 2);
  const v1::ReplicaStats& ejected = stats.replicas(0);
  EXPECT_EQ(ejected.url(), failing.url());
  EXPECT_EQ(ejected.state(), v1::REPLICA_STATE_EJECTED);
  EXPECT_EQ(ejected.circuit(), v1::CIRCUIT_STATE_OPEN);
  EXPECT_EQ(ejected.generation(), 1u);
  EXPECT_EQ(ejected.ejections_consecutive(), 1u);
  EXPECT_EQ(ejected.failures(), 1u);
  EXPECT_EQ(stats.replicas(1).state(), v1::REPLICA_STATE_SERVING);
  EXPECT_EQ(stats.backend_failures(), 1u);

  // Out of the rotation: reads go straight to the healthy replica, and
  // nothing reaches the ejected one (its ejection outlasts the test, so
  // no probe either).
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(Read("/y", &response).ok());
    EXPECT_EQ(response.status(), 200);
    EXPECT_EQ(response.trace().attempts(), 1u);
    EXPECT_EQ(response.trace().replica(), healthy.url());
  }
  EXPECT_EQ(failing.requests_received(), 1);
}

TEST_F(TailgateE2eTest, TheOnlyReplicaIsNeverEjected) {
  ReplicaResponse broken = Body("down");
  broken.status = 500;
  Replica& replica = AddReplica(Always(broken));
  StartTailgate(
      {"--failure_threshold=1", "--cooldown=60s", "--hedge_fraction=0"});
  v1::ReadResponse response;
  for (int i = 0; i < 3; ++i) {
    // Ejecting it would leave no replica: each read still reaches it, and
    // its 500 is forwarded (not UNAVAILABLE).
    ASSERT_TRUE(Read("/x", &response).ok());
    EXPECT_EQ(response.status(), 500);
  }
  EXPECT_EQ(replica.requests_received(), 3);
  const v1::GetStatsResponse stats = Stats();
  ASSERT_EQ(stats.replicas_size(), 1);
  EXPECT_EQ(stats.replicas(0).state(), v1::REPLICA_STATE_SERVING);
  EXPECT_EQ(stats.replicas(0).generation(), 0u);
  EXPECT_EQ(stats.replicas(0).failures(), 3u);
  EXPECT_FALSE(
      absl::StrContains(tailgate_->stderr_text(), "event=replica_state"));
}

// The ids of `pid`'s threads (the names in /proc/PID/task). A thread may
// end while the caller looks at it: callers skip what they cannot read.
std::vector<std::string> ThreadIds(pid_t pid) {
  std::vector<std::string> ids;
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return ids;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ids.push_back(entry->d_name);
  }
  closedir(dir);
  return ids;
}

// The CPUs each of `pid`'s threads may run on, as /proc lists them ("1").
std::vector<std::string> ThreadCpuLists(pid_t pid) {
  std::vector<std::string> lists;
  for (const std::string& tid : ThreadIds(pid)) {
    std::ifstream status(absl::StrCat("/proc/", pid, "/task/", tid, "/status"));
    std::string line;
    while (std::getline(status, line)) {
      absl::string_view rest = line;
      if (absl::ConsumePrefix(&rest, "Cpus_allowed_list:")) {
        lists.push_back(std::string(absl::StripAsciiWhitespace(rest)));
      }
    }
  }
  return lists;
}

TEST_F(TailgateE2eTest, CpusPinsEveryThread) {
  absl::StatusOr<std::vector<int>> allowed = server::AllowedCpus();
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  if (allowed->size() < 2) GTEST_SKIP() << "one CPU: a pin would not show";
  const std::string cpu = std::to_string(allowed->back());
  AddReplica(Always(Body("pinned")));
  StartTailgate({"--cpus=last"});
  v1::ReadResponse response;
  ASSERT_TRUE(Read("/x", &response).ok());  // every thread started by now
  EXPECT_EQ(response.body(), "pinned");
  const std::vector<std::string> lists = ThreadCpuLists(tailgate_->pid());
  // gRPC's pollers, the engine loop, the HTTP listener, main...
  EXPECT_GE(lists.size(), 4u);
  for (const std::string& list : lists) EXPECT_EQ(list, cpu);
  const std::optional<std::string> start =
      tailgate_->WaitForLine("event=start", kWait);
  ASSERT_TRUE(start.has_value()) << tailgate_->stderr_text();
  const std::vector<std::string> fields = absl::StrSplit(*start, ' ');
  EXPECT_THAT(fields, ::testing::Contains(absl::StrCat("cpus=", cpu)))
      << *start;
}

// Each of `pid`'s threads still there: its name and scheduling policy.
struct ThreadPolicy {
  std::string name;
  int policy;
  bool main;  // the process's first thread
};

std::vector<ThreadPolicy> ThreadPolicies(pid_t pid) {
  std::vector<ThreadPolicy> threads;
  for (const std::string& tid : ThreadIds(pid)) {
    std::ifstream comm(absl::StrCat("/proc/", pid, "/task/", tid, "/comm"));
    std::string name;
    const int policy = sched_getscheduler(std::atoi(tid.c_str()));
    if (!std::getline(comm, name) || policy < 0) continue;  // it ended
    threads.push_back({name, policy, tid == std::to_string(pid)});
  }
  return threads;
}

TEST_F(TailgateE2eTest, GrpcThreadsAreBatchAndTheEngineLoopIsNot) {
  AddReplica(Always(Body("batch")));
  StartTailgate({"--sched_policy=batch"});
  v1::ReadResponse response;
  ASSERT_TRUE(Read("/x", &response).ok());
  EXPECT_EQ(response.body(), "batch");
  // The gRPC library serves --admin alone (a read on --listen's loop front
  // never leaves the loop): an admin call has its pollers started.
  Stats();
  int loops = 0;
  int pollers = 0;
  for (const ThreadPolicy& thread : ThreadPolicies(tailgate_->pid())) {
    if (thread.name == "engine_loop") {
      ++loops;
      EXPECT_EQ(thread.policy, SCHED_OTHER);
    }
    // gRPC's pollers are started from main, after the loop. (A thread the
    // loop itself starts, such as libcurl's resolver, inherits the loop's
    // policy.)
    if (thread.name == "nexting_thread") ++pollers;
    if (thread.name == "nexting_thread" || thread.main) {
      EXPECT_EQ(thread.policy, SCHED_BATCH) << thread.name;
    }
  }
  EXPECT_EQ(loops, 1);
  EXPECT_GE(pollers, 1);
  const std::optional<std::string> start =
      tailgate_->WaitForLine("event=start", kWait);
  ASSERT_TRUE(start.has_value()) << tailgate_->stderr_text();
  EXPECT_THAT(std::vector<std::string>(absl::StrSplit(*start, ' ')),
              ::testing::Contains("sched_policy=batch"));
}

TEST_F(TailgateE2eTest, SchedPolicyNormalLeavesThePoliciesAlone) {
  AddReplica(Always(Body("normal")));
  StartTailgate({"--sched_policy=normal"});
  v1::ReadResponse response;
  ASSERT_TRUE(Read("/x", &response).ok());
  EXPECT_EQ(response.body(), "normal");
  // The sidecar inherited this test's policy, and so did its threads.
  const int inherited = sched_getscheduler(0);
  const std::vector<ThreadPolicy> threads = ThreadPolicies(tailgate_->pid());
  EXPECT_GE(threads.size(), 4u);
  for (const ThreadPolicy& thread : threads) {
    EXPECT_EQ(thread.policy, inherited) << thread.name;
  }
}

TEST_F(TailgateE2eTest, SlowReplicaIsHedgedToAFastOne) {
  AddReplica(Always(Body("slow", absl::Milliseconds(800))));
  Replica& fast = AddReplica(Always(Body("fast")));
  StartTailgate({"--hedge_delay=20ms", "--timeout=2s", "--hedge_fraction=1",
                 "--hedge_burst=10"});
  for (int i = 0; i < 4; ++i) {
    v1::ReadResponse response;
    const absl::Time start = absl::Now();
    const grpc::Status status = Read("/r", &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.body(), "fast");
    EXPECT_EQ(response.trace().replica(), fast.url());
    EXPECT_LT(absl::Now() - start, absl::Milliseconds(600));
  }
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.requests(), 4u);
  EXPECT_GE(stats.hedges(), 1u);
  EXPECT_GE(stats.hedge_wins(), 1u);
  EXPECT_GT(stats.amplification(), 1.0);
  EXPECT_EQ(stats.replicas_size(), 2);
}

TEST_F(TailgateE2eTest, TimeoutCapsTheReadWithDeadlineExceeded) {
  AddReplica(Always(Body("late", absl::Seconds(3))));
  StartTailgate({"--timeout=200ms", "--hedge_delay=50ms"});
  v1::ReadResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status status = Read("/slow", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(Stats().timeouts(), 1u);
}

// `text` without the process_* samples, whose values change from one
// scrape to the next (their HELP and TYPE lines stay).
std::string WithoutProcessSamples(const std::string& text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, "process_")) absl::StrAppend(&out, line, "\n");
  }
  return out;
}

TEST_F(TailgateE2eTest, RejectionsAreCountedInStatsAndMetrics) {
  AddReplica(Always(Body("ok")));
  StartTailgate();
  v1::ReadRequest unknown;
  unknown.set_path("/x");
  unknown.set_upstream("blue");
  v1::ReadResponse response;
  EXPECT_EQ(Read(unknown, &response).error_code(), grpc::StatusCode::NOT_FOUND);
  const grpc::Status bad = Read("no-slash", &response);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(bad.error_message(), "path "));
  EXPECT_EQ(Stats().rejected(), 2u);

  absl::StatusOr<server::testing::HttpReply> metrics =
      HttpGet(tailgate_->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(metrics->status, 200);
  EXPECT_TRUE(absl::StrContains(
      metrics->body,
      "tailgate_rejected_total{reason=\"unknown_upstream\"} 1\n"));
  EXPECT_TRUE(absl::StrContains(
      metrics->body,
      "tailgate_rejected_total{reason=\"invalid_argument\"} 1\n"));

  grpc::ClientContext context;
  v1::GetMetricsResponse admin_metrics;
  ASSERT_TRUE(admin_->GetMetrics(&context, {}, &admin_metrics).ok());
  EXPECT_EQ(admin_metrics.content_type(),
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(WithoutProcessSamples(admin_metrics.text()),
            WithoutProcessSamples(metrics->body));
  EXPECT_TRUE(absl::StrContains(admin_metrics.text(), "\nprocess_open_fds "));
}

TEST_F(TailgateE2eTest, DrainFinishesReadsInFlightThenExitsZero) {
  // The read must outlast the checks below, however slowly they run; the
  // drain timeout (5 s by default) and --timeout must outlast the read.
  Replica& replica = AddReplica(Always(Body("done", absl::Seconds(2))));
  StartTailgate({"--hedge_fraction=0", "--timeout=4s"});
  ASSERT_EQ(HealthCheck(channel_, "tailgate.v1.HedgedRead").value_or(-1),
            kServing);
  AsyncRead in_flight;
  in_flight.request.set_path("/slow");
  in_flight.Start(*reads_);
  ASSERT_TRUE(replica.WaitForRequests(1, kWait));

  tailgate_->Signal(SIGTERM);
  ASSERT_TRUE(tailgate_->WaitForLine("event=drain_start", kWait).has_value());
  const absl::StatusOr<HttpReply> ready =
      HttpGet(tailgate_->metrics_port(), "/readyz");
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->status, 503);
  const absl::StatusOr<HttpReply> healthy =
      HttpGet(tailgate_->metrics_port(), "/healthz");
  ASSERT_TRUE(healthy.ok()) << healthy.status();
  EXPECT_EQ(healthy->status, 200);
  EXPECT_EQ(HealthCheck(channel_, "").value_or(-1), kNotServing);
  EXPECT_EQ(HealthCheck(channel_, "tailgate.v1.HedgedRead").value_or(-1),
            kNotServing);
  v1::ReadResponse refused;
  EXPECT_EQ(Read("/new", &refused).error_code(), grpc::StatusCode::UNAVAILABLE);

  ASSERT_TRUE(in_flight.Wait());
  EXPECT_TRUE(in_flight.status.ok()) << in_flight.status.error_message();
  EXPECT_EQ(in_flight.response.body(), "done");
  EXPECT_EQ(tailgate_->WaitForExit(kWait), 0);
  EXPECT_TRUE(absl::StrContains(tailgate_->stderr_text(),
                                "event=drain_end in_flight=0"))
      << tailgate_->stderr_text();
}

TEST_F(TailgateE2eTest, DrainTimeoutCancelsReadsStillRunning) {
  ReplicaResponse hang;
  hang.fault = ReplicaResponse::Fault::kHang;
  Replica& replica = AddReplica(Always(hang));
  StartTailgate(
      {"--drain_timeout=200ms", "--timeout=30s", "--hedge_fraction=0"});
  AsyncRead in_flight;
  in_flight.request.set_path("/hang");
  in_flight.Start(*reads_);
  ASSERT_TRUE(replica.WaitForRequests(1, kWait));

  tailgate_->Signal(SIGTERM);
  EXPECT_EQ(tailgate_->WaitForExit(kWait), 0);
  ASSERT_TRUE(in_flight.Wait());
  EXPECT_FALSE(in_flight.status.ok());
  EXPECT_TRUE(absl::StrContains(tailgate_->stderr_text(),
                                "event=drain_end in_flight=1"))
      << tailgate_->stderr_text();
}

TEST_F(TailgateE2eTest, SighupNeitherKillsNorDrains) {
  AddReplica(Always(Body("still here")));
  StartTailgate({});
  tailgate_->Signal(SIGHUP);
  ASSERT_TRUE(tailgate_->WaitForLine("event=sighup_ignored", kWait).has_value())
      << tailgate_->stderr_text();
  v1::ReadResponse response;
  const grpc::Status status = Read("/x", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.body(), "still here");
  EXPECT_FALSE(absl::StrContains(tailgate_->stderr_text(), "drain_start"));
  tailgate_->Signal(SIGTERM);
  EXPECT_EQ(tailgate_->WaitForExit(kWait), 0);
}

TEST_F(TailgateE2eTest, SecondSignalExitsAtOnce) {
  ReplicaResponse hang;
  hang.fault = ReplicaResponse::Fault::kHang;
  Replica& replica = AddReplica(Always(hang));
  StartTailgate({"--drain_timeout=60s", "--timeout=60s", "--hedge_fraction=0"});
  AsyncRead in_flight;
  in_flight.request.set_path("/hang");
  in_flight.Start(*reads_);
  ASSERT_TRUE(replica.WaitForRequests(1, kWait));

  tailgate_->Signal(SIGTERM);
  ASSERT_TRUE(tailgate_->WaitForLine("event=drain_start", kWait).has_value());
  tailgate_->Signal(SIGINT);
  EXPECT_EQ(tailgate_->WaitForExit(kWait), 130);
  ASSERT_TRUE(in_flight.Wait());
  EXPECT_EQ(in_flight.status.error_code(), grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace tailgate::testing
