#include "tests/faults/fault_test_fixture.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/testing/async_read.h"

namespace tailgate::testing {
namespace {

using ::tailgate::server::testing::AsyncRead;

// Reads per batch while waiting for the half-open probe.
constexpr int kProbeBatch = 4;
// How long the healed replica takes to answer: the probe stays out while
// the rest of its batch is admitted.
constexpr absl::Duration kProbeAnswerDelay = absl::Milliseconds(250);
// The longest pause between two batches.
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
          absl::StrCat("--max_response_bytes=", kMaxResponseBytes),
          // Counting a replica's open connections shows that each attempt's
          // own connection went away; warm spares (engine_preconnect_test)
          // would blur that count.
          "--preconnect=0"};
}

void FaultTest::StartTailgateOn(const std::vector<std::string>& backends) {
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

bool FaultTest::Logged(const std::string& text) const {
  return tailgate_->WaitForLine(text, kWait).has_value();
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

void FaultTest::ReadUntilCircuitOpen(const std::string& url) {
  const absl::Time give_up = absl::Now() + kWait;
  while (ReplicaStatsFor(url).circuit() != v1::CIRCUIT_STATE_OPEN &&
         absl::Now() < give_up) {
    const TimedRead read = ReadTimed("/again");
    ASSERT_TRUE(read.status.ok()) << read.status.error_message();
  }
  ASSERT_EQ(ReplicaStatsFor(url).circuit(), v1::CIRCUIT_STATE_OPEN);
}

void FaultTest::ReadUntilCircuitOpenByTimeouts(const std::string& url) {
  const absl::Time give_up = absl::Now() + kWait;
  int timeouts = 0;
  while (ReplicaStatsFor(url).circuit() != v1::CIRCUIT_STATE_OPEN &&
         absl::Now() < give_up) {
    v1::ReadRequest request;
    request.set_path("/no-hedge");
    request.mutable_hedge()->set_disable(true);
    v1::ReadResponse response;
    const absl::Time start = absl::Now();
    const grpc::Status status = Read(request, &response);
    const absl::Duration elapsed = absl::Now() - start;
    if (status.ok()) {
      EXPECT_EQ(response.body(), kHealthyBody);
      continue;
    }
    ASSERT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
        << status.error_message();
    EXPECT_GE(elapsed, kTimeout);
    EXPECT_LT(elapsed, kTimeout + kMargin);
    ++timeouts;
  }
  ASSERT_EQ(ReplicaStatsFor(url).circuit(), v1::CIRCUIT_STATE_OPEN);
  EXPECT_EQ(timeouts, kFailureThreshold);
  PrintMatrixRow("opened_by_timeouts",
                 absl::StrCat("with hedging off, ", timeouts,
                              " reads ended at --timeout and opened the "
                              "circuit"));
}

bool FaultTest::ReadConcurrently(int count) {
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
    EXPECT_TRUE(read->status.ok()) << read->status.error_message();
    EXPECT_EQ(read->response.body(), kHealthyBody);
    healthy &= read->status.ok() && read->response.body() == kHealthyBody;
  }
  return healthy;
}

void FaultTest::ExpectRecoveryByOneProbe(FaultyEndpoint& endpoint) {
  const v1::ReplicaStats before = ReplicaStatsFor(endpoint.url());
  ASSERT_EQ(before.circuit(), v1::CIRCUIT_STATE_OPEN);
  ASSERT_TRUE(endpoint.Heal(Always(Healthy(kProbeAnswerDelay))).ok());
  const Replica& healed = *endpoint.replica();
  const int64_t received = healed.requests_received();
  const absl::Time healed_at = absl::Now();
  int batches = 0;
  // Until the cooldown ends every batch goes to the healthy replica; the
  // wait paces the batches.
  do {
    ++batches;
    if (!ReadConcurrently(kProbeBatch)) return;
  } while (!healed.WaitForRequests(received + 1, kBatchPace) &&
           absl::Now() < healed_at + kCooldown + kWait);
  const absl::Duration recovered_after = absl::Now() - healed_at;
  EXPECT_EQ(healed.requests_received() - received, 1)
      << "requests that reached the healed replica while half-open";

  const v1::ReplicaStats after = ReplicaStatsFor(endpoint.url());
  EXPECT_EQ(after.circuit(), v1::CIRCUIT_STATE_CLOSED);
  EXPECT_EQ(after.generation(), before.generation() + 2);
  EXPECT_EQ(after.attempts(), before.attempts() + 1);
  EXPECT_EQ(after.failures(), before.failures());
  const std::string replica = absl::StrCat("replica=", endpoint.url());
  EXPECT_TRUE(Logged(absl::StrCat(
      replica,
      " from=open to=half_open generation=", before.generation() + 1)));
  EXPECT_TRUE(Logged(absl::StrCat(
      replica,
      " from=half_open to=closed generation=", before.generation() + 2)));
  PrintMatrixRow(
      "recovery",
      absl::StrCat("healed replica got ", healed.requests_received() - received,
                   " request (the probe) in ", batches * kProbeBatch,
                   " concurrent reads; circuit ",
                   v1::CircuitState_Name(after.circuit()), " generation ",
                   before.generation(), "->", after.generation(), " after ",
                   absl::FormatDuration(
                       absl::Trunc(recovered_after, absl::Milliseconds(1)))));
}

void FaultTest::PrintMatrixRow(absl::string_view scenario,
                               absl::string_view observed) {
  std::cout << "[fault-matrix] " << GetParam().name << " " << scenario << ": "
            << observed << std::endl;
}

}  // namespace tailgate::testing
