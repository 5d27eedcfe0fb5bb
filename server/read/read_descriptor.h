// Conversions between the HedgedRead API (tailgate.v1 protos) and the
// engine's types: the read descriptor in, the response out, and the call's
// deadline onto the engine's clock.
//
// Thread safety: pure functions; safe from any thread.

#ifndef TAILGATE_SERVER_READ_READ_DESCRIPTOR_H_
#define TAILGATE_SERVER_READ_READ_DESCRIPTOR_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hedge/transport/engine.h"
#include "proto/tailgate/v1/tailgate.pb.h"

namespace tailgate::server {

// The engine read for `request`, or INVALID_ARGUMENT naming the field:
//   path ...                 (not an origin-form target)
//   method ...               (not a Method value)
//   headers[2].name ...      (see hygiene::SanitizeRequestHeaders)
//   hedge.delay ...          (malformed, negative, or not below `timeout`)
// `upstream` is passed through: the engine knows the replica sets and
// refuses an unknown one with NOT_FOUND. The deadline is left for
// EngineDeadline.
absl::StatusOr<hedge::EngineRead> EngineReadFromRequest(
    const v1::ReadRequest& request, absl::Duration timeout);

// The engine-clock deadline of a call whose gRPC deadline is `call_deadline`
// (system clock; absl::InfiniteFuture() when the caller set none).
// `wall_now` and `engine_now` are the same instant on the two clocks. Not
// capped here: the engine caps it at its --timeout, and must see whose
// deadline is the shorter (a sidecar timeout blames the replicas, a
// caller's deadline does not).
absl::Time EngineDeadline(absl::Time call_deadline, absl::Time wall_now,
                          absl::Time engine_now);

// Moves `engine_response` into `response`.
void FillReadResponse(hedge::EngineResponse engine_response,
                      v1::ReadResponse* response);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_READ_READ_DESCRIPTOR_H_
