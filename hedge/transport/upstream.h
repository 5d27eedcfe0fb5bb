// Upstream: one named replica set with its own policy objects (breakers,
// picker, hedge budget, hedge delay, hedge payoff gate), counters and warm
// connections; and
// UpstreamSet, every configured upstream by name.
//
// Thread safety: an Upstream's configuration is constant after
// construction; its policy objects and counters are safe from any thread;
// `warm` is loop thread only, except its stats(). An UpstreamSet is
// constant after construction.

#ifndef TAILGATE_HEDGE_TRANSPORT_UPSTREAM_H_
#define TAILGATE_HEDGE_TRANSPORT_UPSTREAM_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "hedge/adaptive/hedge_payoff.h"
#include "hedge/circuit_breaker.h"
#include "hedge/clock.h"
#include "hedge/config/engine_config.h"
#include "hedge/hedge_budget.h"
#include "hedge/hedge_delay.h"
#include "hedge/replica_picker.h"
#include "hedge/transport/engine.h"
#include "hedge/transport/engine_counters.h"
#include "hedge/transport/engine_snapshot.h"
#include "hedge/transport/warm_connections.h"

namespace tailgate::hedge::transport {

class Upstream {
 public:
  // `clock` and `observer` (may be null) must outlive the upstream.
  Upstream(const UpstreamConfig& config, Clock& clock,
           EngineObserver* observer);
  Upstream(const Upstream&) = delete;
  Upstream& operator=(const Upstream&) = delete;

  const UpstreamConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }
  const hygiene::ReplicaUrl& replica(size_t index) const {
    return config_.replicas[index];
  }

  ReplicaPicker& picker() { return *picker_; }
  HedgeBudget& budget() { return budget_; }
  HedgeDelayPolicy& delay() { return *delay_; }
  HedgePayoff& payoff() { return payoff_; }
  ReplicaCounters& counters(size_t replica) { return counters_[replica]; }
  UpstreamCounters& totals() { return totals_; }
  WarmConnections& warm() { return warm_; }

  // Appends its UpstreamSnapshot and one ReplicaSnapshot per replica, and
  // adds this upstream's credits and warm connections to the engine-wide
  // figures.
  void AddTo(EngineSnapshot& snapshot) const;

 private:
  const UpstreamConfig config_;
  std::vector<std::unique_ptr<CircuitBreaker>> breakers_;
  std::unique_ptr<ReplicaPicker> picker_;
  HedgeBudget budget_;
  std::unique_ptr<HedgeDelayPolicy> delay_;
  HedgePayoff payoff_;
  std::vector<ReplicaCounters> counters_;  // by replica index
  UpstreamCounters totals_;
  WarmConnections warm_;
};

class UpstreamSet {
 public:
  UpstreamSet(const std::vector<UpstreamConfig>& configs, Clock& clock,
              EngineObserver* observer);

  // The upstream called `name` ("" is the default set); null if none is.
  Upstream* Find(absl::string_view name) const;

  const std::vector<std::unique_ptr<Upstream>>& all() const { return all_; }

 private:
  std::vector<std::unique_ptr<Upstream>> all_;  // in configuration order
  absl::flat_hash_map<std::string, Upstream*> by_name_;
};

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_UPSTREAM_H_
