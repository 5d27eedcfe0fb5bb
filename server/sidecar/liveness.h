// Liveness, as /healthz reports it: whether restarting the sidecar could
// help its clients. It is live when its door answers a probe the way a new
// client would (grpc.health.v1 over a new connection to --listen,
// server/grpc/door_probe.h), or, when that probe fails, while reads are
// still being answered (the last within kServingWindow): a door that
// cannot take one more connection because clients hold every one, while
// their reads flow, is not cured by a restart, and an attacker who can
// lock new clients out must not be able to drive the sidecar into a
// restart loop. It is not live when neither holds: the loop is wedged, or
// nothing can be served.
//
// Thread safety: a pure function.

#ifndef TAILGATE_SERVER_SIDECAR_LIVENESS_H_
#define TAILGATE_SERVER_SIDECAR_LIVENESS_H_

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace tailgate::server {

// Reads answered this recently keep a failed probe from failing /healthz.
inline constexpr absl::Duration kServingWindow = absl::Seconds(3);

// `probe`: the door probe's result; `last_answer`: when a read was last
// answered (absl::InfinitePast() if never).
absl::Status CheckLiveness(const absl::Status& probe, absl::Time last_answer,
                           absl::Time now);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_SIDECAR_LIVENESS_H_
