// DoorProbe: whether the gRPC door on --listen can serve, asked the way a
// client would: a new connection to --listen and a grpc.health.v1 Check of
// the whole server (""), which must answer SERVING within `deadline`. It backs
// /healthz, so that a sidecar whose door is wedged (for instance, a gRPC
// listener that stopped accepting after running out of descriptors) fails
// its liveness probe and is restarted, instead of answering "ok" for ever.
// A door that is draining answers NOT_SERVING; a draining sidecar is still
// live, so that counts as live here (readiness says "draining").
//
// The probe runs on the calling thread, with a plain socket (TCP, or the
// Unix socket of a unix: address) and an nghttp2 client, sharing no thread
// or poller with the gRPC library's servers: a flood of --admin cannot
// delay it, so it judges the door on --listen alone.
//
// A result is reused for `min_interval`, so a client hammering /healthz
// costs at most one connection per interval.
//
// Thread safety: Check may be called from any thread; calls are
// serialised.
#ifndef TAILGATE_SERVER_GRPC_DOOR_PROBE_H_
#define TAILGATE_SERVER_GRPC_DOOR_PROBE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hedge/sync/mutex.h"
#include "server/net/listen_address.h"

namespace tailgate::server {

class DoorProbe {
 public:
  DoorProbe(ListenAddress door, absl::Duration deadline,
            absl::Duration min_interval);

  // OK when the door answered; UNAVAILABLE naming what failed otherwise.
  // Blocks the calling thread for at most `deadline` (and a name lookup of
  // a host-name address).
  absl::Status Check();

 private:
  absl::Status Probe();

  const ListenAddress door_;
  const std::string target_;
  const absl::Duration deadline_;
  const absl::Duration min_interval_;
  hedge::Mutex mu_;
  absl::Time last_probe_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Status last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_GRPC_DOOR_PROBE_H_
