// What the sidecar logs as it starts and while its listeners run: the
// start line with every setting in force (and one line per upstream when
// there are several), and the warnings of listeners that cannot accept or
// refuse connections over their limit.
//
// Thread safety: LogStart from one thread; the returned callbacks may run
// on any thread, while `log` lives.

#ifndef TAILGATE_SERVER_SIDECAR_START_LOG_H_
#define TAILGATE_SERVER_SIDECAR_START_LOG_H_

#include <cstdint>
#include <functional>

#include "absl/strings/string_view.h"
#include "server/config/server_config.h"
#include "server/net/accept_backoff.h"
#include "server/observability/log.h"
#include "server/version/build_info.h"

namespace tailgate::server {

// event=start, with the version and commit of `build` first, then the
// first replica set's policy (the only one without --config); with more
// than one set, an event=upstream line for each.
void LogStart(Logger& log, const ServerConfig& config, const BuildInfo& build);

// One warning per pause of `listener` whose accept() failed.
AcceptBackoff::Report AcceptFailureLog(const Logger& log,
                                       absl::string_view listener);

// One warning at the 1st, 10th, 100th... connection `listener` closed at
// accept.
std::function<void(uint64_t)> ConnectionRefusedLog(const Logger& log,
                                                   absl::string_view listener);

// One warning at the 1st, 10th, 100th... connection with no call open that
// `listener` closed to make room for a new one.
std::function<void(uint64_t)> IdleConnectionClosedLog(
    const Logger& log, absl::string_view listener);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_SIDECAR_START_LOG_H_
