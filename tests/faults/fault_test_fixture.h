// FaultTest: the fixture of the fault-injection suite. It runs the real
// tailgate binary (TailgateE2eTest) with the suite's flags against
// FaultyEndpoints with the parameter's fault and, where a test wants one,
// a healthy Replica, and offers the checks the suite makes after each fault:
// nothing left in flight, the faulty replica's connections released, error
// messages free of replica details, a circuit recovering by one probe.
//
// Each test prints its observations as "[fault-matrix] <fault> <scenario>:
// ..." lines, the source of the fault matrix in docs/RELIABILITY.md.
//
// Thread safety: for the test's main thread, like TailgateE2eTest.

#ifndef TAILGATE_TESTS_FAULTS_FAULT_TEST_FIXTURE_H_
#define TAILGATE_TESTS_FAULTS_FAULT_TEST_FIXTURE_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/faults/fault_case.h"
#include "tests/faults/faulty_endpoint.h"

namespace tailgate::testing {

class FaultTest : public TailgateE2eTest,
                  public ::testing::WithParamInterface<FaultCase> {
 protected:
  // The suite's tailgate flags (see Flags()).
  static constexpr absl::Duration kHedgeDelay = absl::Milliseconds(20);
  static constexpr absl::Duration kTimeout = absl::Seconds(1);
  static constexpr absl::Duration kCooldown = absl::Milliseconds(300);
  static constexpr int kFailureThreshold = 2;
  // Slack on every time bound, for a loaded 2-core machine under
  // sanitizers; kHedgeDelay + kMargin stays below --timeout, so a read that
  // waited for the deadline instead of hedging or falling back fails its
  // bound.
  static constexpr absl::Duration kMargin = absl::Milliseconds(600);
  static_assert(kDripTotal > kTimeout, "two dripping replicas must time out");

  struct TimedRead {
    grpc::Status status;
    v1::ReadResponse response;
    absl::Duration elapsed;
  };

  // A new endpoint with the parameter's fault.
  FaultyEndpoint& AddFaulty();
  // Starts tailgate with the suite's flags on `backends`, and connects.
  void StartTailgateOn(const std::vector<std::string>& backends);

  TimedRead ReadTimed(const std::string& path);
  // `url`'s entry in GetStats; a failure and an empty entry if none.
  v1::ReplicaStats ReplicaStatsFor(const std::string& url);
  // Whether tailgate logged a line containing `text` (waits up to kWait).
  bool Logged(const std::string& text) const;

  // No read and no attempt in flight, overall and on every replica.
  void ExpectNothingInFlight();
  // The endpoint's replica keeps only the parameter's idle connections;
  // when its attempts are neutral, every one of them was closed by tailgate
  // before an answer.
  void ExpectConnectionsReleased(const FaultyEndpoint& endpoint);
  // The message names no replica and carries no transport error text.
  void ExpectNoReplicaDetails(const std::string& message);

  // Reads (each one must succeed) until `url`'s circuit is open.
  void ReadUntilCircuitOpen(const std::string& url);
  // Reads with hedging disabled until `url`'s circuit is open: each one
  // either succeeds on the healthy replica or starts on the hung `url` and
  // ends at the sidecar's --timeout (a failure for `url`'s breaker).
  void ReadUntilCircuitOpenByTimeouts(const std::string& url);
  // Heals `endpoint`, whose circuit is open, then reads in concurrent
  // batches until a request reaches it: exactly one does (the half-open
  // probe, which the healed replica answers after a delay, so the batch's
  // other reads are admitted while it is out), and the circuit closes.
  void ExpectRecoveryByOneProbe(FaultyEndpoint& endpoint);

  // Prints "[fault-matrix] <fault> <scenario>: <observed>".
  void PrintMatrixRow(absl::string_view scenario, absl::string_view observed);

  std::vector<std::unique_ptr<FaultyEndpoint>> faulty_;

 private:
  std::vector<std::string> Flags() const;
  // `count` reads at once with hedging disabled; each must answer healthy.
  // Returns whether all did.
  bool ReadConcurrently(int count);
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_FAULTS_FAULT_TEST_FIXTURE_H_
