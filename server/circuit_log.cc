#include "server/circuit_log.h"

namespace tailgate::server {

void CircuitLog::OnCircuitTransition(const std::string& upstream,
                                     const std::string& replica,
                                     hedge::CircuitState from,
                                     hedge::CircuitState to,
                                     uint64_t generation) {
  // "" is the default replica set, the only one the flags configure.
  auto fields = {LogField("upstream", upstream.empty() ? "default" : upstream),
                 LogField("replica", replica),
                 LogField("from", hedge::CircuitStateName(from)),
                 LogField("to", hedge::CircuitStateName(to)),
                 LogField("generation", generation)};
  if (to == hedge::CircuitState::kOpen) {
    log_.Warn("circuit", fields);
  } else {
    log_.Info("circuit", fields);
  }
}

}  // namespace tailgate::server
