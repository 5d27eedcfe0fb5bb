#include "hedge/transport/upstream.h"

#include <optional>
#include <utility>

#include "hedge/adaptive/adaptive_hedge_delay.h"

namespace tailgate::hedge::transport {
namespace {

bool SameCircuit(const CircuitConfig& a, const CircuitConfig& b) {
  return a.failure_threshold == b.failure_threshold &&
         a.cooldown == b.cooldown && a.failure_rate == b.failure_rate &&
         a.min_requests == b.min_requests && a.window == b.window &&
         a.max_ejection_time == b.max_ejection_time &&
         a.probe_successes == b.probe_successes && a.ramp_up == b.ramp_up;
}

bool SameGiveUp(const GiveUpConfig& a, const GiveUpConfig& b) {
  return a.factor == b.factor && a.min == b.min && a.max == b.max;
}

bool SameBudget(const HedgeBudgetConfig& a, const HedgeBudgetConfig& b) {
  return a.fraction == b.fraction && a.burst == b.burst;
}

// The delay policy's settings; the adaptive one aims at the hedge fraction.
bool SameDelay(const UpstreamConfig& a, const UpstreamConfig& b) {
  return a.hedge_delay == b.hedge_delay &&
         a.adaptive_delay.enabled == b.adaptive_delay.enabled &&
         a.adaptive_delay.min == b.adaptive_delay.min &&
         a.adaptive_delay.max == b.adaptive_delay.max &&
         a.budget.fraction == b.budget.fraction;
}

bool SameRetryBudget(const RetryBudgetConfig& a, const RetryBudgetConfig& b) {
  return a.fraction == b.fraction && a.per_second == b.per_second &&
         a.window == b.window;
}

// `fresh` unless `keep` holds and `previous` has one to share.
template <typename T, typename Make>
std::shared_ptr<T> CarriedOver(const std::shared_ptr<T>* previous, bool keep,
                               Make fresh) {
  if (previous != nullptr && keep && *previous != nullptr) return *previous;
  return fresh();
}

}  // namespace

Upstream::Upstream(const UpstreamConfig& config, const EngineConfig& engine,
                   Clock& clock, EngineObserver* observer,
                   const Upstream* previous)
    : config_(config),
      clock_(clock),
      timeout_(EffectiveTimeout(config, engine)),
      attempt_limits_{EffectiveMaxResponseBytes(config, engine),
                      engine.max_response_headers,
                      engine.max_response_header_bytes} {
  const UpstreamConfig* before =
      previous != nullptr ? &previous->config_ : nullptr;
  budget_ = CarriedOver(
      previous != nullptr ? &previous->budget_ : nullptr,
      before != nullptr && SameBudget(before->budget, config.budget),
      [&] { return std::make_shared<HedgeBudget>(config.budget); });
  retry_budget_ = CarriedOver(
      previous != nullptr ? &previous->retry_budget_ : nullptr,
      before != nullptr && SameRetryBudget(before->retry, config.retry),
      [&] { return std::make_shared<RetryBudget>(config.retry); });
  if (config.tenant_share < 1) {
    tenant_credits_ = CarriedOver(
        previous != nullptr ? &previous->tenant_credits_ : nullptr,
        before != nullptr && SameBudget(before->budget, config.budget) &&
            before->tenant_share == config.tenant_share,
        [&] {
          return std::make_shared<TenantCredits>(config.budget,
                                                 config.tenant_share);
        });
  }
  delay_ = CarriedOver<HedgeDelayPolicy>(
      previous != nullptr ? &previous->delay_ : nullptr,
      before != nullptr && SameDelay(*before, config), [&] {
        return std::make_shared<AdaptiveHedgeDelay>(
            config.adaptive_delay, config.hedge_delay, config.budget.fraction);
      });
  payoff_ = CarriedOver(previous != nullptr ? &previous->payoff_ : nullptr,
                        true, [] { return std::make_shared<TenantPayoff>(); });
  give_up_ = CarriedOver(
      previous != nullptr ? &previous->give_up_ : nullptr,
      before != nullptr && SameGiveUp(before->give_up, config.give_up),
      [&] { return std::make_shared<GiveUpPoint>(config.give_up); });
  if (config.max_requests > 0) {
    requests_ = CarriedOver(
        previous != nullptr ? &previous->requests_ : nullptr,
        before != nullptr && before->max_requests == config.max_requests,
        [&] { return std::make_shared<Semaphore>(config.max_requests); });
  }
  totals_ =
      CarriedOver(previous != nullptr ? &previous->totals_ : nullptr, true,
                  [] { return std::make_shared<UpstreamCounters>(); });
  warm_ = CarriedOver(
      previous != nullptr ? &previous->warm_ : nullptr,
      before != nullptr && before->preconnect == config.preconnect, [&] {
        return std::make_shared<WarmConnections>(
            clock, WarmConnections::Options{config.preconnect});
      });

  std::vector<CircuitBreaker*> breakers;
  std::vector<ReplicaLoad*> loads;
  for (const hygiene::ReplicaUrl& replica : config_.replicas) {
    std::string label = hygiene::ReplicaLabel(replica);
    std::shared_ptr<ReplicaState> state;
    if (previous != nullptr) {
      auto it = previous->index_of_label_.find(label);
      if (it != previous->index_of_label_.end() &&
          SameCircuit(previous->replicas_[it->second]->breaker.config(),
                      config.circuit)) {
        state = previous->replicas_[it->second];
      }
    }
    if (state == nullptr) {
      CircuitBreaker::TransitionListener listener;
      if (observer != nullptr) {
        listener = [observer, upstream = config_.name,
                    label](const CircuitTransition& transition) {
          observer->OnCircuitTransition(upstream, label, transition);
        };
      }
      state =
          std::make_shared<ReplicaState>(config.circuit, std::move(listener));
    }
    index_of_label_.emplace(std::move(label), replicas_.size());
    breakers.push_back(&state->breaker);
    loads.push_back(&state->load);
    replicas_.push_back(std::move(state));
  }
  if (!breakers.empty()) {
    picker_ = std::make_unique<ReplicaPicker>(breakers, loads,
                                              config.circuit.max_ejected_share);
  }
}

std::optional<Permit> Upstream::TryAdmit() {
  if (requests_ == nullptr) return Permit();
  return requests_->TryAcquire();
}

void Upstream::RetireMissingFrom(const Upstream& next) {
  for (const auto& [label, index] : index_of_label_) {
    if (!next.index_of_label_.contains(label)) picker_->Retire(index);
  }
}

void Upstream::AddTo(EngineSnapshot& snapshot) const {
  UpstreamSnapshot& totals = snapshot.upstreams.emplace_back();
  totals.name = config_.name;
  totals.hedge_credits = budget_->credits();
  totals.retry_credits = retry_budget_->credits(clock_.Now());
  totals.hedge_delay = delay_->DelayFor(std::nullopt);
  totals.hedge_delay_auto = config_.adaptive_delay.enabled;
  const absl::Time now = clock_.Now();
  totals.give_up_after = GiveUpAfter(now).value_or(absl::ZeroDuration());
  totals.give_up_learned = give_up_->learned();
  totals.hedge_win_ratio = payoff_->win_ratio();
  totals.hedge_spend = payoff_->spend();
  totals.hedges_held_back = payoff_->held_back();
  totals.replicas = replicas_.size();
  totals_->CopyTo(totals);
  snapshot.hedge_credits += totals.hedge_credits;
  const WarmConnectionStats warm = warm_->stats();
  snapshot.warm_connections.opened += warm.opened;
  snapshot.warm_connections.used += warm.used;
  snapshot.warm_connections.discarded += warm.discarded;
  snapshot.warm_connections.idle += warm.idle;
  for (size_t i = 0; i < replicas_.size(); ++i) {
    ReplicaSnapshot& replica = snapshot.replicas.emplace_back();
    replica.upstream = config_.name;
    replica.url = hygiene::ReplicaLabel(config_.replicas[i]);
    replica.address = config_.replicas[i].address;
    replica.circuit = replicas_[i]->breaker.Snapshot(now);
    replica.load = replicas_[i]->load.Snapshot(now);
    replicas_[i]->counters.CopyTo(replica);
    replica.backed_off = picker_->BackedOff(i, now);
    replica.degraded = picker_->Degraded(i);
    replica.back_off_remaining = replica.backed_off
                                     ? picker_->BackedOffUntil(i) - now
                                     : absl::ZeroDuration();
  }
}

UpstreamSet::UpstreamSet(const std::vector<UpstreamConfig>& configs,
                         const EngineConfig& engine, Clock& clock,
                         EngineObserver* observer,
                         const UpstreamSet* previous) {
  for (const UpstreamConfig& config : configs) {
    std::shared_ptr<Upstream> before =
        previous != nullptr ? previous->Find(config.name) : nullptr;
    auto upstream = std::make_shared<Upstream>(config, engine, clock, observer,
                                               before.get());
    if (before != nullptr && before->size() > 0) {
      before->RetireMissingFrom(*upstream);
    }
    all_.push_back(upstream);
    by_name_.emplace(config.name, std::move(upstream));
  }
}

std::shared_ptr<Upstream> UpstreamSet::Find(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace tailgate::hedge::transport
