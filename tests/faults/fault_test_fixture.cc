#include "tests/faults/fault_test_fixture.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/testing/async_read.h"

namespace tailgate::testing {
namespace {

using ::tailgate::server::testing::AsyncRead;

// Reads per batch while the healed replica is probed.
constexpr int kProbeBatch = 4;
// How long the healed replica takes to answer: each probe stays out while
// later batches are admitted, and still passes, well before the give-up
// point (FaultTest::kGiveUpMin).
constexpr absl::Duration kProbeAnswerDelay = absl::Milliseconds(100);
// The longest pause between two batches, and between two reads while
// waiting for an ejection: the cost of a replica that was avoided decays
// over about a second (hedge/health/replica_load.h), so reads need not be
// back to back.
constexpr absl::Duration kBatchPace = absl::Milliseconds(20);

// Text that would betray a replica or libcurl in a message to the caller.
constexpr std::array<absl::string_view, 13> kLeakyTexts = {
    "127.0.0.1",
    "http://",
    "curl",
    "connection refused",
    "couldn't connect",
    "recv failure",
    "operation timed out",
    "failure when receiving",
    "unsupported http",
    "header without colon",
    "weird server reply",
    "transfer closed",
    "reset by peer"};

}  // namespace

FaultyEndpoint& FaultTest::AddFaulty() {
  absl::StatusOr<std::unique_ptr<FaultyEndpoint>> endpoint =
      FaultyEndpoint::Start(GetParam().fault);
  if (!endpoint.ok()) {
    // Every check after this needs the endpoint: stop with the reason.
    std::fprintf(stderr, "cannot start a faulty endpoint: %s\n",
                 endpoint.status().ToString().c_str());
    std::abort();
  }
  faulty_.push_back(*std::move(endpoint));
  return *faulty_.back();
}

std::vector<std::string> FaultTest::Flags() const {
  return {absl::StrCat("--hedge_delay=", absl::FormatDuration(kHedgeDelay)),
          "--hedge_fraction=1", "--hedge_burst=10",
          absl::StrCat("--timeout=", absl::FormatDuration(kTimeout)),
          absl::StrCat("--failure_threshold=", kFailureThreshold),
          absl::StrCat("--cooldown=", absl::FormatDuration(kCooldown)),
          absl::StrCat("--probe_successes=", kProbeSuccesses),
          // The give-up point comes well after the hedge delay: a hedged
          // read's hung loser is neutral (what hedging and load-aware choice
          // do alone); reads whose own hedge delay is the point's ceiling
          // show what the give-up point adds.
          absl::StrCat("--give_up_min=", absl::FormatDuration(kGiveUpMin)),
          absl::StrCat("--give_up_max=", absl::FormatDuration(kGiveUpMax)),
          absl::StrCat("--max_response_bytes=", kMaxResponseBytes),
          // Counting a replica's open connections shows that each attempt's
          // own connection went away; warm spares (engine_preconnect_test)
          // would blur that count.
          "--preconnect=0"};
}

void FaultTest::StartTailgateOn(const std::vector<std::string>& backends) {
  // A hedge loser cancelled when the hedge answers has run about
  // kHedgeDelay: well before the give-up point, so it stays neutral.
  ASSERT_LE(kHedgeDelay * 5, kGiveUpMin);
  // A read given up on ends well before --timeout.
  ASSERT_LT(kGiveUpMax + kMargin, kTimeout);
  // A read with hedging disabled outlives every give-up point it might be
  // wrongly given, and ends by its own deadline, not --timeout.
  ASSERT_GE(kNoHedgeDeadline, 2 * kGiveUpMax);
  ASSERT_LT(kNoHedgeDeadline, kTimeout);
  ASSERT_NO_FATAL_FAILURE(StartTailgateWithBackends(backends, Flags()));
  // Connect now, so that no timed read pays for the gRPC handshake.
  ASSERT_TRUE(
      channel_->WaitForConnected(absl::ToChronoTime(absl::Now() + kWait)));
}

FaultTest::TimedRead FaultTest::ReadTimed(const std::string& path) {
  TimedRead read;
  const absl::Time start = absl::Now();
  read.status = Read(path, &read.response);
  read.elapsed = absl::Now() - start;
  return read;
}

v1::ReplicaStats FaultTest::ReplicaStatsFor(const std::string& url) {
  const v1::GetStatsResponse stats = Stats();
  for (const v1::ReplicaStats& replica : stats.replicas()) {
    if (replica.url() == url) return replica;
  }
  ADD_FAILURE() << "GetStats has no replica " << url;
  return {};
}

std::optional<std::string> FaultTest::LoggedLine(
    const std::string& text) const {
  return tailgate_->WaitForLine(text, kWait);
}

void FaultTest::ExpectNothingInFlight() {
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.in_flight(), 0);
  for (const v1::ReplicaStats& replica : stats.replicas()) {
    EXPECT_EQ(replica.in_flight(), 0) << replica.url();
  }
}

void FaultTest::ExpectConnectionsReleased(const FaultyEndpoint& endpoint) {
  const Replica* replica = endpoint.replica();
  if (replica == nullptr) return;  // refused: it never had a connection
  EXPECT_GT(replica->requests_received(), 0);
  EXPECT_TRUE(
      replica->WaitForOpenConnections(GetParam().idle_connections, kWait))
      << "open connections: " << replica->open_connections();
  if (GetParam().verdict == Verdict::kNeutral) {
    EXPECT_TRUE(replica->WaitForDisconnectsBeforeResponse(
        replica->requests_received(), kWait))
        << replica->client_disconnects_before_response() << " of "
        << replica->requests_received() << " attempts closed unanswered";
  }
}

void FaultTest::ExpectNoReplicaDetails(const std::string& message) {
  for (const auto& endpoint : faulty_) {
    EXPECT_FALSE(absl::StrContains(message, endpoint->url())) << message;
  }
  const std::string lower = absl::AsciiStrToLower(message);
  for (absl::string_view text : kLeakyTexts) {
    EXPECT_FALSE(absl::StrContains(lower, text)) << message;
  }
}

void FaultTest::ExpectFirstEjectionLogged(const std::string& url) {
  EXPECT_TRUE(
      LoggedLine(absl::StrCat(
                     "event=replica_state upstream=\"\" replica=", url,
                     " from=serving to=ejected reason=consecutive ejected_for=",
                     absl::FormatDuration(kCooldown), " generation=1"))
          .has_value())
      << tailgate_->stderr_text();
}

void FaultTest::ReadUntilEjected(const std::string& url) {
  const absl::Time give_up = absl::Now() + kWait;
  int reads = 0;
  while (ReplicaStatsFor(url).state() == v1::REPLICA_STATE_SERVING &&
         absl::Now() < give_up) {
    const TimedRead read = ReadTimed("/again");
    ASSERT_TRUE(read.status.ok()) << read.status.error_message();
    EXPECT_EQ(read.response.body(), kHealthyBody);
    ++reads;
    absl::SleepFor(kBatchPace);
  }
  const v1::ReplicaStats seen = ReplicaStatsFor(url);
  ASSERT_NE(seen.state(), v1::REPLICA_STATE_SERVING);
  EXPECT_GE(seen.failures(), static_cast<uint64_t>(kFailureThreshold));
  EXPECT_GE(seen.ejections_consecutive(), 1u);
  EXPECT_EQ(seen.ejections_failure_rate(), 0u);
  // Its first ejection, from serving at generation 0.
  ExpectFirstEjectionLogged(url);
  PrintMatrixRow(
      "ejected",
      absl::StrCat(reads, " more reads; ejected after ", seen.failures(),
                   " failures (reason consecutive, ejected_for ",
                   absl::FormatDuration(kCooldown), ", generation 1)"));
}

void FaultTest::ReadUntilEjectedAtTheGiveUpPoint(
    const std::string& url, const std::string& healthy_url) {
  const absl::Time give_up = absl::Now() + kWait;
  const v1::ReplicaStats before = ReplicaStatsFor(url);
  const int64_t delay_nanos = absl::ToInt64Nanoseconds(kLateHedgeDelay);
  int reads = 0;
  int replaced = 0;
  absl::Duration slowest;
  while (ReplicaStatsFor(url).state() == v1::REPLICA_STATE_SERVING &&
         absl::Now() < give_up) {
    v1::ReadRequest request;
    request.set_path("/late-hedge");
    request.mutable_hedge()->mutable_delay()->set_seconds(delay_nanos /
                                                          1'000'000'000);
    request.mutable_hedge()->mutable_delay()->set_nanos(
        static_cast<int32_t>(delay_nanos % 1'000'000'000));
    v1::ReadResponse response;
    const absl::Time start = absl::Now();
    const grpc::Status status = Read(request, &response);
    const absl::Duration elapsed = absl::Now() - start;
    ++reads;
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.body(), kHealthyBody);
    EXPECT_EQ(response.trace().replica(), healthy_url);
    EXPECT_LT(elapsed, kLateHedgeDelay + kMargin);
    slowest = std::max(slowest, elapsed);
    if (response.trace().attempts() == 2) {
      // Started on the hung replica: its hedge, asked for at the read's
      // hedge delay (also its give-up point, which came no earlier), won.
      ++replaced;
      EXPECT_TRUE(response.trace().hedged());
      EXPECT_TRUE(response.trace().hedge_won());
      EXPECT_GE(elapsed, kLateHedgeDelay);
    } else {
      EXPECT_EQ(response.trace().attempts(), 1u);
      EXPECT_FALSE(response.trace().hedged());
    }
    absl::SleepFor(kBatchPace);
  }
  const v1::ReplicaStats seen = ReplicaStatsFor(url);
  ASSERT_NE(seen.state(), v1::REPLICA_STATE_SERVING);
  // Hedged reads never failed it (FaultMatrixTest checks failures == 0
  // before this): the primaries that lost their race after running past
  // the give-up point, kFailureThreshold in a row, ejected it. Each one's
  // hedge was launched, so no give-up fallback followed, and no read
  // waited for --timeout.
  EXPECT_EQ(replaced, kFailureThreshold);
  EXPECT_EQ(seen.give_ups(), before.give_ups());
  EXPECT_EQ(seen.failures() - before.failures(),
            static_cast<uint64_t>(replaced));
  EXPECT_EQ(seen.failures(), static_cast<uint64_t>(kFailureThreshold));
  EXPECT_EQ(seen.ejections_consecutive(), 1u);
  EXPECT_EQ(Stats().timeouts(), 0u);
  ExpectFirstEjectionLogged(url);
  PrintMatrixRow(
      "ejected_at_give_up_point",
      absl::StrCat("hedging on with a ",
                   absl::ToInt64Milliseconds(kLateHedgeDelay),
                   " ms hedge delay, ", reads, " reads, all OK, slowest ",
                   absl::ToInt64Milliseconds(slowest), " ms; ", replaced,
                   " started on it, each won by its hedge at the give-up "
                   "point (",
                   seen.give_ups() - before.give_ups(),
                   " give-up fallbacks), 0 timeouts; ejected after ",
                   seen.failures(),
                   " failures (reason consecutive, generation 1)"));
}

void FaultTest::ExpectHedgeDisabledReadNotGivenUp() {
  const v1::GetStatsResponse before = Stats();
  v1::ReadRequest request;
  request.set_path("/no-hedge");
  request.mutable_hedge()->set_disable(true);
  v1::ReadResponse response;
  grpc::ClientContext context;
  const absl::Time start = absl::Now();
  context.set_deadline(absl::ToChronoTime(start + kNoHedgeDeadline));
  const grpc::Status status = reads_->Read(&context, request, &response);
  const absl::Duration elapsed = absl::Now() - start;
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << status.error_message();
  EXPECT_GE(elapsed, kNoHedgeDeadline);
  // The call ends on the caller's side at its deadline, and the read in
  // the sidecar at the same deadline: wait until it is done there too.
  const absl::Time until = absl::Now() + kWait;
  v1::GetStatsResponse after = Stats();
  while (after.in_flight() != 0 && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(5));
    after = Stats();
  }
  ExpectNothingInFlight();
  // One attempt, and no extra one past the give-up point.
  EXPECT_EQ(after.attempts() - before.attempts(), 1u);
  EXPECT_EQ(after.hedges(), before.hedges());
  ASSERT_EQ(after.replicas_size(), before.replicas_size());
  uint64_t give_ups = 0;
  for (int i = 0; i < after.replicas_size(); ++i) {
    const v1::ReplicaStats& now = after.replicas(i);
    const v1::ReplicaStats& then = before.replicas(i);
    ASSERT_EQ(now.url(), then.url());
    give_ups += now.give_ups() - then.give_ups();
    // The caller's deadline blames no replica.
    EXPECT_EQ(now.failures(), then.failures()) << now.url();
    EXPECT_EQ(now.state(), v1::REPLICA_STATE_SERVING) << now.url();
  }
  EXPECT_EQ(give_ups, 0u);
  PrintMatrixRow(
      "all_faulty_hedging_off",
      absl::StrCat(
          absl::StatusCodeToString(
              static_cast<absl::StatusCode>(status.error_code())),
          " at its ", absl::ToInt64Milliseconds(kNoHedgeDeadline),
          " ms deadline, in ", absl::ToInt64Milliseconds(elapsed), " ms; ",
          after.attempts() - before.attempts(), " attempt, ", give_ups,
          " give-ups, ", after.hedges() - before.hedges(),
          " extra attempts; no failure, both serving"));
}

bool FaultTest::ReadConcurrently(int count, const std::string& healthy_url) {
  std::vector<std::unique_ptr<AsyncRead>> reads;
  for (int i = 0; i < count; ++i) {
    auto read = std::make_unique<AsyncRead>();
    read->request.set_path("/probe");
    read->request.mutable_hedge()->set_disable(true);
    read->context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
    read->Start(*reads_);
    reads.push_back(std::move(read));
  }
  bool healthy = true;
  for (const auto& read : reads) {
    read->done.WaitForNotification();  // the call's deadline bounds it
    const v1::ReadResponse& response = read->response;
    EXPECT_TRUE(read->status.ok()) << read->status.error_message();
    EXPECT_EQ(response.body(), kHealthyBody);
    // Never the replica being probed, not even as a second attempt.
    EXPECT_EQ(response.trace().replica(), healthy_url);
    EXPECT_EQ(response.trace().attempts(), 1u);
    healthy &= read->status.ok() && response.body() == kHealthyBody &&
               response.trace().replica() == healthy_url &&
               response.trace().attempts() == 1;
  }
  return healthy;
}

void FaultTest::ExpectRecoveryByProbes(FaultyEndpoint& endpoint,
                                       const std::string& healthy_url) {
  const v1::ReplicaStats before = ReplicaStatsFor(endpoint.url());
  ASSERT_EQ(before.state(), v1::REPLICA_STATE_EJECTED);
  ASSERT_TRUE(endpoint.Heal(Always(Healthy(kProbeAnswerDelay))).ok());
  const Replica& healed = *endpoint.replica();
  const int64_t received = healed.requests_received();
  const absl::Time healed_at = absl::Now();
  int batches = 0;
  v1::ReplicaStats after;
  // Until its ejection ends every batch goes to the healthy replica only;
  // then a read is copied to it as a probe, and while that probe is out
  // (kProbeAnswerDelay) later batches still go to the healthy replica
  // only. The wait paces the batches, and ends early when a probe arrives.
  do {
    ++batches;
    if (!ReadConcurrently(kProbeBatch, healthy_url)) return;
    healed.WaitForRequests(healed.requests_received() + 1, kBatchPace);
    after = ReplicaStatsFor(endpoint.url());
  } while (after.state() != v1::REPLICA_STATE_SERVING &&
           absl::Now() < healed_at + kCooldown + kWait);
  const absl::Duration recovered_after = absl::Now() - healed_at;
  ASSERT_EQ(after.state(), v1::REPLICA_STATE_SERVING);
  // Probes are its only requests while it is out, and they are not
  // attempts of any read.
  EXPECT_EQ(healed.requests_received() - received, kProbeSuccesses)
      << "requests that reached the healed replica while out of service";
  EXPECT_EQ(after.probes_passed() - before.probes_passed(),
            static_cast<uint64_t>(kProbeSuccesses));
  EXPECT_EQ(after.probes_failed(), before.probes_failed());
  EXPECT_EQ(after.attempts(), before.attempts());
  EXPECT_EQ(after.failures(), before.failures());
  // Ejected -> probing (the first probe) -> serving (the last).
  EXPECT_EQ(after.generation(), before.generation() + 2);
  EXPECT_LT(after.weight(), 1.0);  // ramping up
  ExpectNothingInFlight();

  const std::optional<std::string> back = LoggedLine(
      absl::StrCat("event=replica_state upstream=\"\" replica=", endpoint.url(),
                   " from=probing to=serving for="));
  ASSERT_TRUE(back.has_value()) << tailgate_->stderr_text();
  EXPECT_TRUE(absl::StrContains(
      *back, absl::StrCat(" probes_failed=", after.probes_failed(),
                          " generation=", before.generation() + 2)))
      << *back;
  // Probing is no state of its own in the log: one line out, one back.
  EXPECT_FALSE(absl::StrContains(tailgate_->stderr_text(), "to=probing"));
  PrintMatrixRow(
      "recovery",
      absl::StrCat("healed replica got ", healed.requests_received() - received,
                   " requests (probes beside reads, ", kProbeSuccesses,
                   " passes) and none of ", batches * kProbeBatch,
                   " concurrent reads; ejected -> probing -> serving, "
                   "generation ",
                   before.generation(), "->", after.generation(), ", after ",
                   absl::FormatDuration(
                       absl::Trunc(recovered_after, absl::Milliseconds(1)))));
}

void FaultTest::PrintMatrixRow(absl::string_view scenario,
                               absl::string_view observed) {
  std::cout << "[fault-matrix] " << GetParam().name << " " << scenario << ": "
            << observed << std::endl;
}

}  // namespace tailgate::testing
