// Counters of the warm-connection pools (warm_connections.h), in their own
// header so that engine.h's users need not see libcurl.

#ifndef TAILGATE_HEDGE_TRANSPORT_CURL_WARM_CONNECTION_STATS_H_
#define TAILGATE_HEDGE_TRANSPORT_CURL_WARM_CONNECTION_STATS_H_

#include <cstdint>

namespace tailgate::hedge {

struct WarmConnectionStats {
  uint64_t opened = 0;     // connects started ahead of need
  uint64_t used = 0;       // handed to libcurl for a new connection
  uint64_t discarded = 0;  // closed unused: refused, closed by peer, too old
  int64_t idle = 0;        // warm sockets held now
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_TRANSPORT_CURL_WARM_CONNECTION_STATS_H_
