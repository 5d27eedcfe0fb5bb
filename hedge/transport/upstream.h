// Upstream: one generation of a named replica set — its replicas (each
// address of a resolved name is one), its policy objects (breakers,
// picker, hedge and retry budgets, per-tenant credits, hedge delay, hedge
// payoff gate, in-flight cap), counters and warm connections; and
// UpstreamSet, every configured upstream by name.
//
// Generations: a reload or a new DNS answer builds a new UpstreamSet from
// the previous one. What the change leaves alone carries over, so that a
// replica or an upstream that persists keeps its state:
//  - a replica (keyed by its label, ReplicaLabel, within its upstream's
//    name) keeps its breaker, load and counters while its circuit
//    settings are unchanged;
//  - an upstream keeps its totals always, its hedge budget (credits) while
//    hedge_fraction and hedge_burst are unchanged (and its tenants' credits
//    while tenant_share is unchanged too), its retry budget while the
//    retry settings are unchanged, its hedge payoff gate always, its hedge
//    delay policy (and what an adaptive one learned) while hedge_delay,
//    hedge_delay_min/max and hedge_fraction are, its in-flight cap while
//    max_requests is, and its warm connections while preconnect is.
// A read holds a shared_ptr to the Upstream it was admitted to and
// finishes on it. A replica that left the set is retired in the previous
// generation's picker: reads still in flight never start another attempt
// on it, and the attempts already there finish (the drain).
//
// Thread safety: an Upstream's configuration and replica list are constant
// after construction; its policy objects and counters are safe from any
// thread; `warm` is loop thread only, except its stats(). An UpstreamSet
// is constant after construction; building one retires replicas in the
// previous set (safe from any thread).

#ifndef TAILGATE_HEDGE_TRANSPORT_UPSTREAM_H_
#define TAILGATE_HEDGE_TRANSPORT_UPSTREAM_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "hedge/clock.h"
#include "hedge/config/engine_config.h"
#include "hedge/health/circuit_breaker.h"
#include "hedge/health/give_up_point.h"
#include "hedge/health/replica_load.h"
#include "hedge/health/replica_picker.h"
#include "hedge/policy/admission_limits.h"
#include "hedge/policy/hedge_budget.h"
#include "hedge/policy/hedge_delay.h"
#include "hedge/policy/retry_budget.h"
#include "hedge/tenants/tenant_credits.h"
#include "hedge/tenants/tenant_payoff.h"
#include "hedge/transport/curl/http_attempt.h"
#include "hedge/transport/curl/warm_connections.h"
#include "hedge/transport/engine.h"
#include "hedge/transport/engine_counters.h"
#include "hedge/transport/engine_snapshot.h"

namespace tailgate::hedge::transport {

// What one replica keeps across generations.
struct ReplicaState {
  ReplicaState(const CircuitConfig& circuit,
               CircuitBreaker::TransitionListener listener)
      : breaker(circuit, std::move(listener)) {}

  CircuitBreaker breaker;  // its health
  ReplicaLoad load;        // what choosing it costs
  ReplicaCounters counters;
};

class Upstream {
 public:
  // `config`'s replicas are concrete (resolved names expanded, see
  // discovery::ExpandReplicas) and may be empty (a name not resolved
  // yet). `engine` gives the engine-wide limits. `previous` (may be null)
  // is the same upstream's last generation, whose state is carried over.
  // `clock` and `observer` (may be null) must outlive the upstream.
  Upstream(const UpstreamConfig& config, const EngineConfig& engine,
           Clock& clock, EngineObserver* observer, const Upstream* previous);
  Upstream(const Upstream&) = delete;
  Upstream& operator=(const Upstream&) = delete;

  const UpstreamConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }
  size_t size() const { return replicas_.size(); }
  const hygiene::ReplicaUrl& replica(size_t index) const {
    return config_.replicas[index];
  }

  // The cap on its reads' deadlines, and the limits of its attempts.
  absl::Duration timeout() const { return timeout_; }
  const AttemptLimits& attempt_limits() const { return attempt_limits_; }

  // A slot of this upstream's own in-flight cap: an empty Permit when it
  // has none, nullopt when the cap is full.
  std::optional<Permit> TryAdmit();
  int64_t max_requests() const { return config_.max_requests; }

  // REQUIRES: size() > 0
  ReplicaPicker& picker() { return *picker_; }
  HedgeBudget& budget() { return *budget_; }
  // The budget itself, for a batch that holds credit of it.
  std::shared_ptr<HedgeBudget> shared_budget() const { return budget_; }
  RetryBudget& retry_budget() { return *retry_budget_; }
  // Each tenant's own share of budget() (hedge/tenants/tenant_credits.h); null
  // when tenant_share is 1 (no per-tenant limit).
  TenantCredits* tenant_credits() { return tenant_credits_.get(); }
  HedgeDelayPolicy& delay() { return *delay_; }
  TenantPayoff& payoff() { return *payoff_; }
  GiveUpPoint& give_up() { return *give_up_; }
  // The give-up point of a read admitted at `now`, at most half its
  // timeout (an attempt younger than that is not blamed for a timeout
  // either); before it is learned, GiveUpPoint::kPriorHedgeDelays times
  // the hedge delay in force; nullopt when giving up is off.
  std::optional<absl::Duration> GiveUpAfter(absl::Time now) const {
    return give_up_->PointFor(
        now, GiveUpPoint::kPriorHedgeDelays * delay_->DelayFor(std::nullopt),
        timeout_ / 2);
  }
  ReplicaCounters& counters(size_t replica) {
    return replicas_[replica]->counters;
  }
  ReplicaLoad& load(size_t replica) { return replicas_[replica]->load; }
  UpstreamCounters& totals() { return *totals_; }
  WarmConnections& warm() { return *warm_; }

  // Retires in this generation every replica `next` no longer has.
  void RetireMissingFrom(const Upstream& next);

  // Appends its UpstreamSnapshot and one ReplicaSnapshot per replica, and
  // adds this upstream's credits and warm connections to the engine-wide
  // figures.
  void AddTo(EngineSnapshot& snapshot) const;

 private:
  const UpstreamConfig config_;
  Clock& clock_;
  const absl::Duration timeout_;
  const AttemptLimits attempt_limits_;
  std::vector<std::shared_ptr<ReplicaState>> replicas_;  // by replica index
  absl::flat_hash_map<std::string, size_t> index_of_label_;
  std::unique_ptr<ReplicaPicker> picker_;  // null without replicas
  std::shared_ptr<HedgeBudget> budget_;
  std::shared_ptr<RetryBudget> retry_budget_;
  std::shared_ptr<TenantCredits> tenant_credits_;  // null: share 1
  std::shared_ptr<HedgeDelayPolicy> delay_;
  std::shared_ptr<TenantPayoff> payoff_;
  std::shared_ptr<GiveUpPoint> give_up_;
  std::shared_ptr<Semaphore> requests_;  // null: no cap of its own
  std::shared_ptr<UpstreamCounters> totals_;
  std::shared_ptr<WarmConnections> warm_;
};

class UpstreamSet {
 public:
  // One Upstream per entry of `configs`, each built from its namesake in
  // `previous` (may be null), whose vanished replicas are retired.
  UpstreamSet(const std::vector<UpstreamConfig>& configs,
              const EngineConfig& engine, Clock& clock,
              EngineObserver* observer, const UpstreamSet* previous);

  // The upstream called `name` ("" is the default set); null if none is.
  std::shared_ptr<Upstream> Find(absl::string_view name) const;

  const std::vector<std::shared_ptr<Upstream>>& all() const { return all_; }

 private:
  std::vector<std::shared_ptr<Upstream>> all_;  // in configuration order
  absl::flat_hash_map<std::string, std::shared_ptr<Upstream>> by_name_;
};

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_UPSTREAM_H_
