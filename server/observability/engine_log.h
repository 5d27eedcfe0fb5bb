// EngineLog: the sidecar's engine observer. Replica health (Retry-After
// back-offs included) goes to CircuitLog, lookups of replica names to
// DiscoveryLog; each rate-limits its own lines.
//
// Thread safety: as CircuitLog and DiscoveryLog: safe from any thread.

#ifndef TAILGATE_SERVER_OBSERVABILITY_ENGINE_LOG_H_
#define TAILGATE_SERVER_OBSERVABILITY_ENGINE_LOG_H_

#include <string>

#include "hedge/transport/engine.h"
#include "server/observability/circuit_log.h"
#include "server/observability/discovery_log.h"
#include "server/observability/log.h"

namespace tailgate::server {

class EngineLog final : public hedge::EngineObserver {
 public:
  // `log` must outlive this observer.
  explicit EngineLog(const Logger& log) : circuits_(log), names_(log) {}

  void OnCircuitTransition(
      const std::string& upstream, const std::string& replica,
      const hedge::CircuitTransition& transition) override {
    circuits_.OnCircuitTransition(upstream, replica, transition);
  }
  void OnReplicaBackOff(const std::string& upstream, const std::string& replica,
                        const hedge::BackOffChange& change) override {
    circuits_.OnReplicaBackOff(upstream, replica, change);
  }
  void OnNameLookup(const std::string& upstream, const std::string& name,
                    const hedge::NameLookup& lookup) override {
    names_.OnNameLookup(upstream, name, lookup);
  }

 private:
  CircuitLog circuits_;
  DiscoveryLog names_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_OBSERVABILITY_ENGINE_LOG_H_
