// How many client connections each listener may keep open, out of the
// descriptors the process may use (RLIMIT_NOFILE): what replica
// connections and the process itself need is set aside first.
//
// Thread safety: a pure function.

#ifndef TAILGATE_SERVER_SIDECAR_CONNECTION_LIMITS_H_
#define TAILGATE_SERVER_SIDECAR_CONNECTION_LIMITS_H_

#include <cstdint>

#include "server/config/server_config.h"

namespace tailgate::server {

struct ConnectionLimits {
  int listen = 0;
  int admin = 0;
  int http = 0;
  int read = 0;  // the read door's, out of --max_connections
  int64_t reserved = 0;
};

// The split for `config` with `file_limit` descriptors (0: no limit).
// Each listener gets at least 1 and at most its --max_connections (or
// --http_max_connections).
ConnectionLimits SplitDescriptors(const ServerConfig& config,
                                  uint64_t file_limit);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_SIDECAR_CONNECTION_LIMITS_H_
