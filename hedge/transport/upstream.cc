#include "hedge/transport/upstream.h"

#include <optional>
#include <utility>

namespace tailgate::hedge::transport {

Upstream::Upstream(const UpstreamConfig& config, Clock& clock,
                   EngineObserver* observer)
    : config_(config),
      clock_(clock),
      budget_(config.budget),
      retry_budget_(config.retry),
      delay_(std::make_unique<FixedHedgeDelay>(config.hedge_delay)),
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
  if (config_.tenant_share < 1) {
    tenant_credits_ =
        std::make_unique<TenantCredits>(config_.budget, config_.tenant_share);
  }
}

void Upstream::AddTo(EngineSnapshot& snapshot) const {
  UpstreamSnapshot& totals = snapshot.upstreams.emplace_back();
  totals.name = config_.name;
  totals.requests = totals_.requests.load(std::memory_order_relaxed);
  totals.hedges = totals_.hedges.load(std::memory_order_relaxed);
  totals.hedge_wins = totals_.hedge_wins.load(std::memory_order_relaxed);
  totals.hedge_credits = budget_.credits();
  totals.retry_credits = retry_budget_.credits(clock_.Now());
  totals.hedge_delay = delay_->DelayFor(std::nullopt);
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
