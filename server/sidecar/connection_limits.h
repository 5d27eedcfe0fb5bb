// How many client connections each listener may keep open, out of the
// descriptors the process may use (RLIMIT_NOFILE): what replica
// connections and the process itself need, and the fixed limits of --admin
// and --metrics_listen, are set aside first; the read listeners share the
// rest. Client connections alone therefore cannot use up the descriptors. A limit
// that leaves a read listener fewer than kMinClientConnections is an
// error that says what to raise: a sidecar that starts anyway serves
// almost no one, and its own liveness probe takes one of them.
//
// Thread safety: a pure function.

#ifndef TAILGATE_SERVER_SIDECAR_CONNECTION_LIMITS_H_
#define TAILGATE_SERVER_SIDECAR_CONNECTION_LIMITS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "server/config/server_config.h"

namespace tailgate::server {

struct ConnectionLimits {
  int listen = 0;
  int admin = 0;
  int metrics = 0;  // --metrics_listen's: scrapes and probes
  int http = 0;
  int read = 0;  // the read door's, out of --max_connections
  int64_t reserved = 0;
};

// The fewest client connections a read listener (--listen, --read_listen,
// --http_listen) may be left with.
inline constexpr int kMinClientConnections = 16;

// The split for `config` with `file_limit` descriptors (0: no limit).
// Each listener gets at most its --max_connections (or
// --http_max_connections). FAILED_PRECONDITION, naming the limit and the
// least that would do, if a read listener would get fewer than
// kMinClientConnections (or than its own maximum, if that is lower).
absl::StatusOr<ConnectionLimits> SplitDescriptors(const ServerConfig& config,
                                                  uint64_t file_limit);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_SIDECAR_CONNECTION_LIMITS_H_
