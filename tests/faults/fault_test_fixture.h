// FaultTest: the fixture of the fault-injection suite. It runs the real
// tailgate binary (TailgateE2eTest) with the suite's flags against
// FaultyEndpoints with the parameter's fault and, where a test wants one,
// a healthy Replica, and offers the checks the suite makes after each fault:
// nothing left in flight, the faulty replica's connections released, error
// messages free of replica details, the faulty replica ejected, and its
// return through probes sent beside live reads
// (docs/REPLICA_HEALTH.md).
//
// Each test prints its observations as "[fault-matrix] <fault> <scenario>:
// ..." lines, the source of the fault matrix in docs/RELIABILITY.md.
//
// Thread safety: for the test's main thread, like TailgateE2eTest.

#ifndef TAILGATE_TESTS_FAULTS_FAULT_TEST_FIXTURE_H_
#define TAILGATE_TESTS_FAULTS_FAULT_TEST_FIXTURE_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
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
  static constexpr int kProbeSuccesses = 2;
  // The give-up point lies in [kGiveUpMin, kGiveUpMax]: kGiveUpMax until
  // ten answers are in, then kGiveUpMin (3 x the p99 of loopback answers
  // is far below it).
  static constexpr absl::Duration kGiveUpMin = absl::Milliseconds(200);
  static constexpr absl::Duration kGiveUpMax = absl::Milliseconds(300);
  // Slack on every time bound, for a loaded 2-core machine under
  // sanitizers; kGiveUpMax + kMargin stays below --timeout, so a read that
  // waited for the deadline instead of hedging, falling back or giving up
  // fails its bound (StartTailgateOn checks these relations).
  static constexpr absl::Duration kMargin = absl::Milliseconds(600);
  static_assert(kDripTotal > kTimeout, "two dripping replicas must time out");
  // The hedge delay (HedgeOptions.delay) of the reads that eject a hanging
  // replica: the give-up point's ceiling, so that such a read's give-up
  // point is its hedge delay, as with the default flags (a point learned
  // at 20 ms under a 25 ms hedge delay).
  static constexpr absl::Duration kLateHedgeDelay = kGiveUpMax;
  // The caller's deadline of a read with hedging disabled: well past the
  // give-up point, well before --timeout.
  static constexpr absl::Duration kNoHedgeDeadline = absl::Milliseconds(600);

  struct TimedRead {
    grpc::Status status;
    v1::ReadResponse response;
    absl::Duration elapsed;
  };

  // A new endpoint with the parameter's fault.
  FaultyEndpoint& AddFaulty();
  // Starts tailgate with the suite's flags on `backends`, and connects.
  // Fails first if the suite's constants contradict each other.
  void StartTailgateOn(const std::vector<std::string>& backends);

  TimedRead ReadTimed(const std::string& path);
  // `url`'s entry in GetStats; a failure and an empty entry if none.
  v1::ReplicaStats ReplicaStatsFor(const std::string& url);
  // The first line tailgate logged containing `text` (waits up to kWait).
  std::optional<std::string> LoggedLine(const std::string& text) const;

  // No read and no attempt in flight, overall and on every replica.
  void ExpectNothingInFlight();
  // The endpoint's replica keeps only the parameter's idle connections;
  // when its attempts are neutral, every one of them was closed by tailgate
  // before an answer.
  void ExpectConnectionsReleased(const FaultyEndpoint& endpoint);
  // The message names no replica and carries no transport error text.
  void ExpectNoReplicaDetails(const std::string& message);

  // Reads (each one must succeed with the healthy body) until `url` is
  // out of service, then checks that it was ejected for failing
  // kFailureThreshold times in a row, as the log says.
  // EXPECTs the log line of `url`'s first ejection: from serving at
  // generation 0, for a run of failures, for the first ejection time.
  void ExpectFirstEjectionLogged(const std::string& url);
  void ReadUntilEjected(const std::string& url);
  // Reads with hedging on and a hedge delay of kLateHedgeDelay until the
  // hung `url` is out of service: each one succeeds on `healthy_url`,
  // either at once or, when it started on `url`, by its hedge, launched at
  // the read's give-up point (its hedge delay, never earlier). The primary
  // it beats ran past that point: a failure for `url`, with no give-up
  // fallback (the hedge came first); none waits for --timeout.
  // kFailureThreshold such races in a row eject it.
  void ReadUntilEjectedAtTheGiveUpPoint(const std::string& url,
                                        const std::string& healthy_url);
  // Every replica hangs: a read with hedging disabled and a deadline of
  // kNoHedgeDeadline is never given up on. It makes one attempt, with no
  // give-up fallback past the give-up point, and ends DEADLINE_EXCEEDED
  // at its own deadline, which blames no replica.
  void ExpectHedgeDisabledReadNotGivenUp();
  // Heals `endpoint`, which is ejected, then reads in concurrent batches
  // with hedging disabled until it serves again. Every read is answered by
  // `healthy_url` in one attempt; exactly kProbeSuccesses requests reach
  // the healed replica, all of them probes copied from reads and sent
  // beside them (the healed replica answers after a delay, so the probe is
  // out while later reads are admitted), and it goes ejected -> probing ->
  // serving (generation +2, logged on its return).
  void ExpectRecoveryByProbes(FaultyEndpoint& endpoint,
                              const std::string& healthy_url);

  // Prints "[fault-matrix] <fault> <scenario>: <observed>".
  void PrintMatrixRow(absl::string_view scenario, absl::string_view observed);

  std::vector<std::unique_ptr<FaultyEndpoint>> faulty_;

 private:
  std::vector<std::string> Flags() const;
  // `count` reads at once with hedging disabled; each must be answered by
  // `healthy_url` in one attempt with the healthy body. Returns whether
  // all were.
  bool ReadConcurrently(int count, const std::string& healthy_url);
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_FAULTS_FAULT_TEST_FIXTURE_H_
