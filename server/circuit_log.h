// CircuitLog: the engine observer that writes one log line per circuit
// transition:
//   event=circuit replica=http://10.0.0.7:8080 from=closed to=open generation=3
//
// Thread safety: called on the engine loop thread; Logger is thread-safe
// and writes without blocking on anything but the write(2) itself.

#ifndef TAILGATE_SERVER_CIRCUIT_LOG_H_
#define TAILGATE_SERVER_CIRCUIT_LOG_H_

#include <string>

#include "hedge/transport/engine.h"
#include "server/log.h"

namespace tailgate::server {

class CircuitLog final : public hedge::EngineObserver {
 public:
  // `log` must outlive this observer.
  explicit CircuitLog(Logger& log) : log_(log) {}

  void OnCircuitTransition(const std::string& upstream,
                           const std::string& replica, hedge::CircuitState from,
                           hedge::CircuitState to,
                           uint64_t generation) override;

 private:
  Logger& log_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CIRCUIT_LOG_H_
