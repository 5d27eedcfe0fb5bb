#include "hedge/transport/engine_counters.h"

namespace tailgate::hedge::transport {
namespace {

template <typename T>
T Load(const std::atomic<T>& counter) {
  return counter.load(std::memory_order_relaxed);
}

}  // namespace

void ReplicaCounters::CopyTo(ReplicaSnapshot& replica) const {
  replica.attempts_primary =
      Load(attempts[static_cast<int>(AttemptKind::kPrimary)]);
  replica.attempts_hedge =
      Load(attempts[static_cast<int>(AttemptKind::kHedge)]);
  replica.attempts_fallback =
      Load(attempts[static_cast<int>(AttemptKind::kFallback)]);
  replica.failures = Load(failures);
  replica.give_ups = Load(give_ups);
  replica.probes_passed = Load(probes_passed);
  replica.probes_failed = Load(probes_failed);
  replica.in_flight = Load(in_flight);
  replica.overload_answers_429 = Load(overload_answers_429);
  replica.overload_answers_503 = Load(overload_answers_503);
  replica.attempt_duration = attempt_duration.Snapshot();
}

void EngineCounters::CountLaunch(AttemptKind kind) {
  Bump(attempts);
  if (kind == AttemptKind::kPrimary) return;
  Bump(hedges);
  if (kind == AttemptKind::kFallback) Bump(fallbacks);
}

void EngineCounters::CountReadError(ReadError error) {
  if (error == ReadError::kDeadlineExceeded) {
    Bump(timeouts);
  } else if (error == ReadError::kCancelled) {
    Bump(cancelled);
  }
}

void EngineCounters::CopyTo(EngineSnapshot& s) const {
  s.requests = Load(requests);
  s.rejected_overloaded = Load(rejected_overloaded);
  s.rejected_tenant_share = Load(rejected_tenant_share);
  s.attempts = Load(attempts);
  s.hedges = Load(hedges);
  s.fallbacks = Load(fallbacks);
  s.hedge_wins = Load(hedge_wins);
  s.timeouts = Load(timeouts);
  s.cancelled = Load(cancelled);
  s.backend_failures = Load(backend_failures);
  s.skipped_no_replica =
      Load(skipped[static_cast<int>(SkipReason::kNoReplica)]);
  s.skipped_no_capacity =
      Load(skipped[static_cast<int>(SkipReason::kNoCapacity)]);
  s.skipped_no_budget = Load(skipped[static_cast<int>(SkipReason::kNoBudget)]);
  s.skipped_no_retry_budget =
      Load(skipped[static_cast<int>(SkipReason::kNoRetryBudget)]);
  s.skipped_no_tenant_budget =
      Load(skipped[static_cast<int>(SkipReason::kNoTenantBudget)]);
  s.in_flight_requests = Load(in_flight_requests);
  s.in_flight_attempts = Load(in_flight_attempts);
  s.request_duration = request_duration.Snapshot();
}

void UpstreamCounters::CopyTo(UpstreamSnapshot& upstream) const {
  upstream.requests = requests.load(std::memory_order_relaxed);
  upstream.hedges = hedges.load(std::memory_order_relaxed);
  upstream.hedge_wins = hedge_wins.load(std::memory_order_relaxed);
  upstream.timer_hedges = timer_hedges.load(std::memory_order_relaxed);
  upstream.timer_hedge_wins = timer_hedge_wins.load(std::memory_order_relaxed);
  upstream.late_hedge_waits = late_hedge_waits.load(std::memory_order_relaxed);
  upstream.queued_hedge_waits =
      queued_hedge_waits.load(std::memory_order_relaxed);
  upstream.give_up_fallbacks =
      give_up_fallbacks.load(std::memory_order_relaxed);
  upstream.loser_bytes = loser_bytes.load(std::memory_order_relaxed);
  upstream.losers_released = losers_released.load(std::memory_order_relaxed);
  upstream.loser_release_total =
      absl::Nanoseconds(loser_release_nanos.load(std::memory_order_relaxed));
  upstream.latency_saved = latency_saved.Snapshot();
  upstream.coalesced_reads = Load(coalesced_reads);
  upstream.fetches_saved = Load(fetches_saved);
}

}  // namespace tailgate::hedge::transport
