// EngineSnapshot: the engine's counters since start, for the Admin RPC,
// the metrics and the benchmarks. A consistent-enough view: each field is
// read atomically, not all fields at one instant.

#ifndef TAILGATE_HEDGE_TRANSPORT_ENGINE_SNAPSHOT_H_
#define TAILGATE_HEDGE_TRANSPORT_ENGINE_SNAPSHOT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hedge/health/circuit_breaker.h"
#include "hedge/health/replica_load.h"
#include "hedge/latency_histogram.h"
#include "hedge/transport/curl/warm_connection_stats.h"

namespace tailgate::hedge {

struct ReplicaSnapshot {
  std::string upstream;
  std::string url;           // as configured, or NAME@ADDRESS (ReplicaLabel)
  std::string address;       // the address found for a resolved name, else ""
  CircuitSnapshot circuit;   // state (serving/ejected/probing), ejections
  ReplicaLoadSnapshot load;  // what choosing it costs now
  uint64_t attempts_primary = 0;
  uint64_t attempts_hedge = 0;
  uint64_t attempts_fallback = 0;
  uint64_t failures = 0;
  uint64_t give_ups = 0;  // its primaries past the give-up point when a
                          // fallback was launched for them
  // Probes sent to it while ejected, and how they ended.
  uint64_t probes_passed = 0;
  uint64_t probes_failed = 0;
  int64_t in_flight = 0;
  HistogramSnapshot attempt_duration;
  // Retry-After back-off (ReplicaPicker, Back-off): whether it is backed
  // off now, and for how much longer (zero when not).
  bool backed_off = false;
  absl::Duration back_off_remaining;
  // Its overload answers since start, by status (with or without
  // Retry-After).
  uint64_t overload_answers_429 = 0;
  uint64_t overload_answers_503 = 0;
  // Degraded now (ReplicaPicker, Degraded).
  bool degraded = false;
};

// One replica set's totals and the policy values in force now.
struct UpstreamSnapshot {
  std::string name;            // "" for the default set
  uint64_t requests = 0;       // admitted
  uint64_t hedges = 0;         // extra attempts of either kind
  uint64_t hedge_wins = 0;     // reads answered by the extra attempt, < 500
  double hedge_credits = 0;    // for timer hedges
  double retry_credits = 0;    // for failure fallbacks
  absl::Duration hedge_delay;  // the delay a read without its own gets now
  // The give-up point in force now (hedge/health/give_up_point.h): zero
  // when giving up is off; learned, or four hedge delays until then.
  absl::Duration give_up_after;
  bool give_up_learned = false;
  // Fallbacks launched for primaries past the give-up point.
  uint64_t give_up_fallbacks = 0;
  uint64_t replicas = 0;  // in the current set (resolved names expanded)
  uint64_t dns_refresh_failures = 0;  // failed or empty lookups of its names
  bool hedge_delay_auto = false;      // learned (--hedge_delay=auto) or fixed

  // Hedge accounting. Timer hedges are the speculative extra attempts
  // (failure fallbacks excluded); a timer-hedge win is a read the timer
  // hedge answered with status < 500.
  uint64_t timer_hedges = 0;
  uint64_t timer_hedge_wins = 0;
  // Hedge timers that found the hedge budget below its reserve and waited
  // for the late delay (learned delays only; read_decision.h).
  uint64_t late_hedge_waits = 0;
  // Hedge timers that found the primary's transfer begun after admission
  // (the loop busy) and waited the hedge delay from its beginning instead
  // (engine_loop.cc).
  uint64_t queued_hedge_waits = 0;
  // The payoff gate (hedge/adaptive/hedge_payoff.h): its recent win ratio
  // of timer hedges, the share of wanted hedges it lets ask the budget now,
  // and the hedges it has held back.
  double hedge_win_ratio = 0;
  double hedge_spend = 0;
  uint64_t hedges_held_back = 0;
  // Attempts cancelled because the other attempt answered ("losers"): the
  // bytes (headers and body) they had received, how many were released,
  // and the total time from the winner's answer to each loser's transfer
  // being removed (its connection closed).
  uint64_t loser_bytes = 0;
  uint64_t losers_released = 0;
  absl::Duration loser_release_total;
  // Per timer-hedge win, the latency it saved: the median remaining time
  // of a primary that had already run as long as the cancelled one, from
  // the upstream's censored primary-latency sketch (so an estimate, in
  // the sketch's terms; a win while the sketch has under 100 samples is
  // not counted).
  HistogramSnapshot latency_saved;
  // Coalescing (UpstreamConfig::coalesce): reads that joined a fetch
  // already in flight instead of starting their own, and upstream fetches
  // saved: a shared fetch that answered k callers saved k - 1 (callers
  // that left before its answer are not counted).
  uint64_t coalesced_reads = 0;
  uint64_t fetches_saved = 0;
};

// One tenant's totals (hedge/tenants/tenant_table.h): a named tenant, "" (reads
// without one) or "other" (every tenant after the first few).
struct TenantSnapshot {
  std::string name;
  uint64_t requests = 0;    // admitted
  uint64_t rejected = 0;    // refused: the tenant held its share of reads
  uint64_t hedges = 0;      // extra attempts of either kind
  uint64_t hedge_wins = 0;  // reads answered by the extra attempt, < 500
  int64_t in_flight = 0;    // reads in progress now
};

struct EngineSnapshot {
  uint64_t requests = 0;               // admitted
  uint64_t rejected_overloaded = 0;    // refused by max_requests
  uint64_t rejected_tenant_share = 0;  // refused by a tenant's share
  uint64_t attempts = 0;
  uint64_t hedges = 0;     // extra attempts of either kind
  uint64_t fallbacks = 0;  // of which failure fallbacks
  uint64_t hedge_wins = 0;
  uint64_t timeouts = 0;
  uint64_t cancelled = 0;
  uint64_t backend_failures = 0;
  uint64_t skipped_no_replica = 0;  // extra attempts wanted but not taken
  uint64_t skipped_no_capacity = 0;
  uint64_t skipped_no_budget = 0;         // a hedge, no hedge credit
  uint64_t skipped_no_retry_budget = 0;   // a fallback, no retry credit
  uint64_t skipped_no_tenant_budget = 0;  // a hedge, none of its tenant's
  int64_t in_flight_requests = 0;
  int64_t in_flight_attempts = 0;
  double hedge_credits = 0;           // summed over upstreams
  uint64_t dns_refresh_failures = 0;  // summed over upstreams
  // The loop's own cost: wake-ups, and how late its timers fired in total.
  uint64_t loop_iterations = 0;
  uint64_t timers_fired = 0;
  uint64_t timers_pending = 0;  // armed and neither fired nor cancelled
  // Transfer slots (easy handles) the loop holds, in use or kept for reuse.
  uint64_t attempt_slots = 0;
  WarmConnectionStats warm_connections;  // summed over upstreams
  absl::Duration timer_lateness_total;
  absl::Duration timer_spin_total;  // CPU time spent spinning for timers
  HistogramSnapshot request_duration;
  std::vector<ReplicaSnapshot> replicas;    // upstream by upstream
  std::vector<UpstreamSnapshot> upstreams;  // in configuration order
  std::vector<TenantSnapshot> tenants;      // by slot: in order first seen
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_TRANSPORT_ENGINE_SNAPSHOT_H_
