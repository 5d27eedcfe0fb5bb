#include "hedge/transport/upstream.h"

#include <optional>
#include <utility>

#include "hedge/adaptive/adaptive_hedge_delay.h"

namespace tailgate::hedge::transport {

Upstream::Upstream(const UpstreamConfig& config, Clock& clock,
                   EngineObserver* observer)
    : config_(config),
      budget_(config.budget),
      delay_(std::make_unique<AdaptiveHedgeDelay>(
          config.adaptive_delay, config.hedge_delay, config.budget.fraction)),
      counters_(config.replicas.size()),
      warm_(clock, WarmConnections::Options{config.preconnect}) {
  std::vector<CircuitBreaker*> raw;
  for (const hygiene::ReplicaUrl& replica : config_.replicas) {
    CircuitBreaker::TransitionListener listener;
    if (observer != nullptr) {
      listener = [observer, upstream = config_.name, url = replica.configured](
                     CircuitState from, CircuitState to, uint64_t generation) {
        observer->OnCircuitTransition(upstream, url, from, to, generation);
      };
    }
    breakers_.push_back(
        std::make_unique<CircuitBreaker>(config_.circuit, std::move(listener)));
    raw.push_back(breakers_.back().get());
  }
  picker_ = std::make_unique<ReplicaPicker>(raw);
}

void Upstream::AddTo(EngineSnapshot& snapshot) const {
  UpstreamSnapshot& totals = snapshot.upstreams.emplace_back();
  totals.name = config_.name;
  totals.hedge_credits = budget_.credits();
  totals.hedge_delay = delay_->DelayFor(std::nullopt);
  totals.hedge_delay_auto = config_.adaptive_delay.enabled;
  totals.hedge_win_ratio = payoff_.win_ratio();
  totals.hedge_spend = payoff_.spend();
  totals.hedges_held_back = payoff_.held_back();
  totals_.CopyTo(totals);
  snapshot.hedge_credits += totals.hedge_credits;
  const WarmConnectionStats warm = warm_.stats();
  snapshot.warm_connections.opened += warm.opened;
  snapshot.warm_connections.used += warm.used;
  snapshot.warm_connections.discarded += warm.discarded;
  snapshot.warm_connections.idle += warm.idle;
  for (size_t i = 0; i < config_.replicas.size(); ++i) {
    ReplicaSnapshot& replica = snapshot.replicas.emplace_back();
    replica.upstream = config_.name;
    replica.url = config_.replicas[i].configured;
    replica.circuit = breakers_[i]->Snapshot();
    counters_[i].CopyTo(replica);
  }
}

UpstreamSet::UpstreamSet(const std::vector<UpstreamConfig>& configs,
                         Clock& clock, EngineObserver* observer) {
  for (const UpstreamConfig& config : configs) {
    all_.push_back(std::make_unique<Upstream>(config, clock, observer));
    by_name_.emplace(config.name, all_.back().get());
  }
}

Upstream* UpstreamSet::Find(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace tailgate::hedge::transport
