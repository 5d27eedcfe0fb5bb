// The faults of the fault-injection suite and what Tailgate is documented
// to do about each (README.md "gRPC status codes"; the request lifecycle in
// hedge/decision/read_decision.h).
//
// A FaultCase names one way a replica misbehaves and the outcome the suite
// expects: how replica health judges the faulty replica's attempts, and
// what a read gets when every replica misbehaves that way. FaultHandler gives
// a Replica the behaviour; Fault::kRefuse has no handler, since nothing
// listens (see FaultyEndpoint).
//
// Example:
//   INSTANTIATE_TEST_SUITE_P(Faults, MyTest, ::testing::ValuesIn(FaultCases()),
//                            FaultCaseName);
//   ... Replica::Start(FaultHandler(GetParam().fault)) ...
//
// Thread safety: FaultCases() is immutable and safe from any thread. A
// handler from FaultHandler runs on its replica's loop thread, as every
// Handler does.

#ifndef TAILGATE_TESTS_FAULTS_FAULT_CASE_H_
#define TAILGATE_TESTS_FAULTS_FAULT_CASE_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {

enum class Fault {
  kRefuse,             // nothing listens: connect is refused
  kHang,               // accepts and reads the request, never answers
  kStallAfterStatus,   // status line and headers, then nothing
  kDrip,               // a body far slower than --timeout
  kEndlessChunked,     // 32 KiB chunks every 1 ms, never a last chunk
  kHugeContentLength,  // declares a 1 TB body
  kCloseMidBody,       // half the body, then FIN
  kResetAtOnce,        // RST before any byte
  kMalformedStatus,    // "HTTP/1.1 abc"
  kMalformedHeaders,   // a header line without a colon
  kServerError,        // a complete 503
  kFlap,               // two 503s, two good answers, two 503s, ...
};

// How replica health (docs/REPLICA_HEALTH.md) judges an attempt on the
// faulty replica.
enum class Verdict {
  // The attempt ends in an error (transport, 5xx, over the size limit):
  // it counts toward --failure_threshold and triggers a fallback at once.
  kFailure,
  // The attempt never ends by itself. Cancelled as a hedge loser before the
  // give-up point it is neutral, so hedging around it early never ejects
  // it (its cost keeps primaries away instead); beaten by a hedge or a
  // give-up fallback after running past the give-up point, or cut by the
  // sidecar's own --timeout, it is a failure, and that ejects it. A read
  // with hedging disabled has no give-up point: its attempt there runs
  // until the read's deadline.
  kNeutral,
};

struct FaultCase {
  const char* name;  // the gtest parameter name: "refuse", "hang", ...
  Fault fault;
  Verdict verdict;
  // When every replica has the fault: the call's code, the HTTP status
  // forwarded with OK, and whether the call ends only at --timeout.
  grpc::StatusCode all_faulty_code;
  int forwarded_status;
  bool ends_at_timeout;
  // Connections the faulty replica keeps once no attempt is in flight:
  // 1 when it completes its answers (a kept-alive connection), else 0.
  int64_t idle_connections;
};

// The suite runs tailgate with --max_response_bytes=kMaxResponseBytes: an
// endless chunked body (chunks of half that) crosses it on its third chunk.
inline constexpr int64_t kMaxResponseBytes = 65536;
// How long the drip takes to send its whole body; it must outlast the
// suite's --timeout, so that a read of two dripping replicas times out.
inline constexpr absl::Duration kDripTotal = absl::Seconds(2);

// Every healthy answer in the suite: equivalent replicas serve one body.
inline constexpr char kHealthyBody[] = "healthy";

const std::vector<FaultCase>& FaultCases();

// For INSTANTIATE_TEST_SUITE_P: the case's name.
std::string FaultCaseName(const ::testing::TestParamInfo<FaultCase>& info);

// A 200 with kHealthyBody after `delay`.
ReplicaResponse Healthy(absl::Duration delay = absl::ZeroDuration());

// How a replica with `fault` answers. REQUIRES: fault != Fault::kRefuse.
Handler FaultHandler(Fault fault);

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_FAULTS_FAULT_CASE_H_
