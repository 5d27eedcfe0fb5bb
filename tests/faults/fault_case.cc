#include "tests/faults/fault_case.h"

#include <string>
#include <utility>

namespace tailgate::testing {
namespace {

using Code = grpc::StatusCode;

constexpr size_t kEndlessChunkBytes = kMaxResponseBytes / 2;
constexpr size_t kDripBodyBytes = 200;

ReplicaResponse WithFault(ReplicaResponse::Fault fault) {
  ReplicaResponse response = Healthy();
  response.fault = fault;
  return response;
}

ReplicaResponse ServiceUnavailable() {
  ReplicaResponse response;
  response.status = 503;
  response.body = "unavailable";
  return response;
}

ReplicaResponse Drip() {
  ReplicaResponse response = WithFault(ReplicaResponse::Fault::kDrip);
  response.body = std::string(kDripBodyBytes, 'd');
  response.drip_bytes = 1;
  response.drip_interval = kDripTotal / kDripBodyBytes;
  return response;
}

ReplicaResponse EndlessChunked() {
  ReplicaResponse response = WithFault(ReplicaResponse::Fault::kEndlessChunked);
  response.drip_bytes = kEndlessChunkBytes;
  response.drip_interval = absl::Milliseconds(1);
  return response;
}

// Fails two requests in a row, answers two, and so on: with
// --failure_threshold=2 a run of failures is enough to eject it.
Handler Flap() {
  return [](const ReplicaRequest& request) {
    return (request.id / 2) % 2 == 0 ? ServiceUnavailable() : Healthy();
  };
}

}  // namespace

const std::vector<FaultCase>& FaultCases() {
  static const auto* const cases = new std::vector<FaultCase>{
      // name, fault, verdict, all faulty: code, forwarded status, ends at
      // --timeout; idle connections.
      {"refuse", Fault::kRefuse, Verdict::kFailure, Code::UNAVAILABLE, 0, false,
       0},
      {"hang", Fault::kHang, Verdict::kNeutral, Code::DEADLINE_EXCEEDED, 0,
       true, 0},
      {"stall_after_status", Fault::kStallAfterStatus, Verdict::kNeutral,
       Code::DEADLINE_EXCEEDED, 0, true, 0},
      {"drip", Fault::kDrip, Verdict::kNeutral, Code::DEADLINE_EXCEEDED, 0,
       true, 0},
      {"endless_chunked", Fault::kEndlessChunked, Verdict::kFailure,
       Code::RESOURCE_EXHAUSTED, 0, false, 0},
      {"huge_content_length", Fault::kHugeContentLength, Verdict::kFailure,
       Code::RESOURCE_EXHAUSTED, 0, false, 0},
      {"close_mid_body", Fault::kCloseMidBody, Verdict::kFailure,
       Code::UNAVAILABLE, 0, false, 0},
      {"reset_at_once", Fault::kResetAtOnce, Verdict::kFailure,
       Code::UNAVAILABLE, 0, false, 0},
      {"malformed_status", Fault::kMalformedStatus, Verdict::kFailure,
       Code::UNAVAILABLE, 0, false, 0},
      {"malformed_headers", Fault::kMalformedHeaders, Verdict::kFailure,
       Code::UNAVAILABLE, 0, false, 0},
      {"server_error_503", Fault::kServerError, Verdict::kFailure, Code::OK,
       503, false, 1},
      {"flap", Fault::kFlap, Verdict::kFailure, Code::OK, 503, false, 1},
  };
  return *cases;
}

std::string FaultCaseName(const ::testing::TestParamInfo<FaultCase>& info) {
  return info.param.name;
}

ReplicaResponse Healthy(absl::Duration delay) {
  ReplicaResponse response;
  response.body = kHealthyBody;
  response.delay = delay;
  return response;
}

Handler FaultHandler(Fault fault) {
  using F = ReplicaResponse::Fault;
  switch (fault) {
    case Fault::kRefuse:
      break;
    case Fault::kHang:
      return Always(WithFault(F::kHang));
    case Fault::kStallAfterStatus:
      return Always(WithFault(F::kStallAfterStatus));
    case Fault::kDrip:
      return Always(Drip());
    case Fault::kEndlessChunked:
      return Always(EndlessChunked());
    case Fault::kHugeContentLength:
      return Always(WithFault(F::kHugeContentLength));
    case Fault::kCloseMidBody:
      return Always(WithFault(F::kCloseMidBody));
    case Fault::kResetAtOnce:
      return Always(WithFault(F::kResetAtOnce));
    case Fault::kMalformedStatus:
      return Always(WithFault(F::kMalformedStatus));
    case Fault::kMalformedHeaders:
      return Always(WithFault(F::kMalformedHeaders));
    case Fault::kServerError:
      return Always(ServiceUnavailable());
    case Fault::kFlap:
      return Flap();
  }
  ADD_FAILURE() << "no handler for this fault";
  return nullptr;
}

}  // namespace tailgate::testing
