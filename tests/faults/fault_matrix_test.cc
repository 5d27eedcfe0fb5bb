// The fault matrix: for each fault in FaultCases(), the real
// tailgate binary with one faulty replica next to a healthy one, and with
// every replica faulty. The "[fault-matrix]" lines each test prints fill the
// table in docs/RELIABILITY.md.
//
// What the matrix expects of each row with one faulty replica (the faulty
// one is listed first, so the first read starts on it: neither replica has
// a cost yet, and equal costs go by rotation):
//  - Failures (refuse, endless chunked, huge Content-Length, close mid
//    body, reset, malformed status or headers, 503, flap): each read that
//    starts on it falls back at once. Its second failure in a row ejects it
//    (reason consecutive): the healthy replica has no failure, so the
//    guard rails let it go. A failure under a millisecond leaves its cost
//    at the floor, equal to the healthy one's, so the rotation brings the
//    second failure within a few reads; a slower one (the endless chunked
//    body, ~5 ms) makes it costlier, and load-aware choice keeps primaries
//    off it until that cost decays, so the ejection may come after the 20
//    reads (ReadUntilEjected waits for it).
//  - Hangs (hang, stall after status, drip): the hedge answers at
//    kHedgeDelay, long before the give-up point, so the cancelled loser is
//    neutral and no such hedged read ejects it. What keeps reads off it is
//    load-aware choice: the loser ran ~20 ms, and that cost makes the
//    healthy replica the primary of the reads that follow. Reads whose
//    hedge delay is the give-up point's ceiling (the point is never
//    earlier than a read's hedge delay) have their hedge answer at the
//    point: each primary beaten there is a failure, and two in a row eject
//    it (ReadUntilEjectedAtTheGiveUpPoint). With every replica hanging, a
//    read with hedging disabled is never given up on: one attempt, ended
//    by its deadline (ExpectHedgeDisabledReadNotGivenUp).
//  - Every fault: healed, it comes back through kProbeSuccesses probes
//    copied from reads, never as a read's attempt.

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

// Sequential reads with one faulty replica. By rotation alone half of them
// would start on it.
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
  // Reads won by their extra attempt: the ones that started on the faulty
  // replica (a read started on the healthy one is answered by it).
  uint64_t saved = 0;
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
    if (read.response.trace().hedge_won()) ++saved;
  }
  ExpectNothingInFlight();
  ExpectConnectionsReleased(faulty);

  const v1::GetStatsResponse stats = Stats();
  const v1::ReplicaStats seen = ReplicaStatsFor(faulty.url());
  // The first read started on it.
  EXPECT_GE(saved, 1u);
  EXPECT_EQ(seen.give_ups(), 0u);  // hedges and fallbacks came first
  if (fault.verdict == Verdict::kNeutral) {
    // Hedged around: every loser was cancelled long before the give-up
    // point, which is neutral, so it still serves; load-aware choice sent
    // the primaries elsewhere (rotation alone would give it kReads / 2).
    EXPECT_LE(saved, static_cast<uint64_t>(kReads / 4));
    EXPECT_EQ(seen.failures(), 0u);
    EXPECT_EQ(seen.state(), v1::REPLICA_STATE_SERVING);
    EXPECT_EQ(seen.generation(), 0u);
  } else if (fault.fault != Fault::kFlap) {
    // Every read that started on it failed there; the second failure in a
    // row ejects it, so it started at most kFailureThreshold reads.
    EXPECT_GE(seen.failures(), saved);
    EXPECT_LE(saved, static_cast<uint64_t>(kFailureThreshold));
    if (seen.failures() >= static_cast<uint64_t>(kFailureThreshold)) {
      EXPECT_NE(seen.state(), v1::REPLICA_STATE_SERVING);
      EXPECT_EQ(seen.ejections_consecutive(), 1u);
    }
  } else {
    EXPECT_GE(seen.failures(), 1u);
  }
  PrintMatrixRow(
      "one_faulty",
      absl::StrCat(kReads, "/", kReads, " OK 200 healthy body; slowest ",
                   FormatMs(slowest), "; ", saved,
                   " started on the faulty replica (hedge/fallback won), ",
                   stats.hedge_wins(),
                   " hedge/fallback wins in all; faulty "
                   "replica: attempts ",
                   seen.attempts(), ", failures ", seen.failures(), ", state ",
                   v1::ReplicaState_Name(seen.state()), " generation ",
                   seen.generation()));
  if (fault.verdict == Verdict::kFailure) {
    ASSERT_NO_FATAL_FAILURE(ReadUntilEjected(faulty.url()));
  } else {
    ASSERT_NO_FATAL_FAILURE(
        ReadUntilEjectedAtTheGiveUpPoint(faulty.url(), healthy.url()));
  }
  ExpectRecoveryByProbes(faulty, healthy.url());
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
  // One read: each replica saw one failure (attempts cut by the sidecar's
  // --timeout are failures too), below the threshold; and as both fail
  // alike, neither would be ejected anyway.
  std::string failures;
  for (const std::string& url : {first.url(), second.url()}) {
    const v1::ReplicaStats seen = ReplicaStatsFor(url);
    EXPECT_EQ(seen.failures(), 1u);
    EXPECT_EQ(seen.state(), v1::REPLICA_STATE_SERVING);
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
          ", both serving"));
  if (fault.verdict == Verdict::kNeutral) {
    ASSERT_NO_FATAL_FAILURE(ExpectHedgeDisabledReadNotGivenUp());
  }

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
