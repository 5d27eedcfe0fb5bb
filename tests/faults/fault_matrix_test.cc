// The fault matrix: for each fault in FaultCases(), the real
// tailgate binary with one faulty replica next to a healthy one, and with
// every replica faulty. The "[fault-matrix]" lines each test prints fill the
// table in docs/RELIABILITY.md.

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/testing/http_get.h"
#include "tests/faults/fault_case.h"
#include "tests/faults/fault_test_fixture.h"
#include "tests/faults/faulty_endpoint.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {
namespace {

using ::tailgate::server::testing::HttpGet;
using ::tailgate::server::testing::HttpReply;

// Sequential reads with one faulty replica: the primary rotates, so half of
// them start on the faulty one.
constexpr int kReads = 20;

std::string FormatMs(absl::Duration duration) {
  return absl::StrCat(absl::ToInt64Milliseconds(duration), " ms");
}

using FaultMatrixTest = FaultTest;

TEST_P(FaultMatrixTest, OneFaultyReplicaIsReadAround) {
  const FaultCase& fault = GetParam();
  FaultyEndpoint& faulty = AddFaulty();
  Replica& healthy = AddReplica(Always(Healthy()));
  ASSERT_NO_FATAL_FAILURE(StartTailgateOn({faulty.url(), healthy.url()}));

  absl::Duration slowest;
  for (int i = 0; i < kReads; ++i) {
    const TimedRead read = ReadTimed(absl::StrCat("/item/", i));
    ASSERT_TRUE(read.status.ok()) << read.status.error_message();
    EXPECT_EQ(read.response.status(), 200);
    EXPECT_EQ(read.response.body(), kHealthyBody);
    // A flapping replica answers well between its failures.
    if (fault.fault != Fault::kFlap) {
      EXPECT_EQ(read.response.trace().replica(), healthy.url());
    }
    EXPECT_LT(read.elapsed, kHedgeDelay + kMargin);
    slowest = std::max(slowest, read.elapsed);
  }
  ExpectNothingInFlight();
  ExpectConnectionsReleased(faulty);

  const v1::GetStatsResponse stats = Stats();
  const v1::ReplicaStats seen = ReplicaStatsFor(faulty.url());
  if (fault.verdict == Verdict::kNeutral) {
    // Every read that started on the faulty replica was won by its hedge;
    // the cancelled losers left the breaker untouched.
    EXPECT_EQ(stats.hedge_wins(), static_cast<uint64_t>(kReads / 2));
    EXPECT_GE(seen.attempts(), static_cast<uint64_t>(kReads / 2));
    EXPECT_EQ(seen.failures(), 0u);
    EXPECT_EQ(seen.circuit(), v1::CIRCUIT_STATE_CLOSED);
    EXPECT_EQ(seen.generation(), 0u);
  } else {
    EXPECT_GE(seen.failures(), static_cast<uint64_t>(kFailureThreshold));
    EXPECT_TRUE(Logged(absl::StrCat("replica=", faulty.url(),
                                    " from=closed to=open generation=1")));
  }
  PrintMatrixRow(
      "one_faulty",
      absl::StrCat(kReads, "/", kReads, " OK 200 healthy body; slowest ",
                   FormatMs(slowest), "; hedge/fallback wins ",
                   stats.hedge_wins(), "; faulty replica: attempts ",
                   seen.attempts(), ", failures ", seen.failures(),
                   ", circuit ", v1::CircuitState_Name(seen.circuit()),
                   " generation ", seen.generation()));
  if (fault.verdict == Verdict::kFailure) {
    ASSERT_NO_FATAL_FAILURE(ReadUntilCircuitOpen(faulty.url()));
  } else {
    ASSERT_NO_FATAL_FAILURE(ReadUntilCircuitOpenByTimeouts(faulty.url()));
  }
  ExpectRecoveryByOneProbe(faulty);
}

TEST_P(FaultMatrixTest, EveryReplicaFaultyEndsWithTheDocumentedCode) {
  const FaultCase& fault = GetParam();
  FaultyEndpoint& first = AddFaulty();
  FaultyEndpoint& second = AddFaulty();
  ASSERT_NO_FATAL_FAILURE(StartTailgateOn({first.url(), second.url()}));

  const TimedRead read = ReadTimed("/item");
  const std::string& message = read.status.error_message();
  EXPECT_EQ(read.status.error_code(), fault.all_faulty_code) << message;
  if (fault.all_faulty_code == grpc::StatusCode::OK) {
    // Both attempts failed; the last 5xx (the fallback's) is forwarded.
    EXPECT_EQ(read.response.status(), fault.forwarded_status);
    EXPECT_EQ(read.response.trace().attempts(), 2u);
  }
  if (fault.all_faulty_code == grpc::StatusCode::RESOURCE_EXHAUSTED) {
    EXPECT_TRUE(absl::StrContains(
        message, absl::StrCat("max_response_bytes (", kMaxResponseBytes, ")")))
        << message;
  }
  ExpectNoReplicaDetails(message);
  if (fault.ends_at_timeout) {
    EXPECT_GE(read.elapsed, kTimeout);
    EXPECT_LT(read.elapsed, kTimeout + kMargin);
    EXPECT_EQ(Stats().timeouts(), 1u);
  } else {
    EXPECT_LT(read.elapsed, kHedgeDelay + kMargin);
  }
  ExpectNothingInFlight();
  ExpectConnectionsReleased(first);
  ExpectConnectionsReleased(second);
  // One read: each replica saw one failure, below the threshold (attempts
  // cut by the sidecar's --timeout are failures too).
  std::string failures;
  for (const std::string& url : {first.url(), second.url()}) {
    const v1::ReplicaStats seen = ReplicaStatsFor(url);
    EXPECT_EQ(seen.failures(), 1u);
    EXPECT_EQ(seen.circuit(), v1::CIRCUIT_STATE_CLOSED);
    absl::StrAppend(&failures, failures.empty() ? "" : "/", seen.failures());
  }
  PrintMatrixRow(
      "all_faulty",
      absl::StrCat(
          absl::StatusCodeToString(
              static_cast<absl::StatusCode>(read.status.error_code())),
          read.status.ok()
              ? absl::StrCat(" status ", read.response.status(), " after ",
                             read.response.trace().attempts(), " attempts")
              : absl::StrCat(" \"", message, "\""),
          " in ", FormatMs(read.elapsed), "; failures ", failures,
          ", circuits closed"));

  // Still alive and serving: healthy, and reading once the replicas heal.
  const absl::StatusOr<HttpReply> health =
      HttpGet(tailgate_->metrics_port(), "/healthz");
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->status, 200);
  ASSERT_TRUE(first.Heal(Always(Healthy())).ok());
  ASSERT_TRUE(second.Heal(Always(Healthy())).ok());
  const TimedRead healed = ReadTimed("/item");
  ASSERT_TRUE(healed.status.ok()) << healed.status.error_message();
  EXPECT_EQ(healed.response.body(), kHealthyBody);
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultMatrixTest,
                         ::testing::ValuesIn(FaultCases()), FaultCaseName);

}  // namespace
}  // namespace tailgate::testing
