// EngineCounters and ReplicaCounters: the engine's counters since start.
//
// Thread safety: written on the loop thread (Submit's refusals and
// admissions on the caller's thread), read from any thread by Snapshot;
// every field is atomic or a thread-safe LatencyHistogram.

#ifndef TAILGATE_HEDGE_TRANSPORT_ENGINE_COUNTERS_H_
#define TAILGATE_HEDGE_TRANSPORT_ENGINE_COUNTERS_H_

#include <array>
#include <atomic>
#include <cstdint>

#include "hedge/decision/read_decision.h"
#include "hedge/latency_histogram.h"
#include "hedge/transport/engine_snapshot.h"

namespace tailgate::hedge::transport {

// One replica's counters.
struct ReplicaCounters {
  std::array<std::atomic<uint64_t>, 3> attempts{};  // by AttemptKind
  std::atomic<uint64_t> failures{0};
  std::atomic<uint64_t> give_ups{0};
  std::atomic<uint64_t> probes_passed{0};
  std::atomic<uint64_t> probes_failed{0};
  std::atomic<int64_t> in_flight{0};
  // Its overload answers (IsOverloadAnswer): 429, 503.
  std::atomic<uint64_t> overload_answers_429{0};
  std::atomic<uint64_t> overload_answers_503{0};
  LatencyHistogram attempt_duration;

  void CountAttempt(AttemptKind kind) {
    attempts[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed);
  }
  // An overload answer of `status` (429 or 503; any other is not counted).
  void CountOverloadAnswer(int status) {
    if (status == 429) {
      overload_answers_429.fetch_add(1, std::memory_order_relaxed);
    } else if (status == 503) {
      overload_answers_503.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Copies the counters into `replica` (its names are the caller's).
  void CopyTo(ReplicaSnapshot& replica) const;
};

// One upstream's read totals and hedge accounting (its replicas have their
// own counters); UpstreamSnapshot says what each means.
struct UpstreamCounters {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> hedges{0};
  std::atomic<uint64_t> hedge_wins{0};
  std::atomic<uint64_t> timer_hedges{0};
  std::atomic<uint64_t> timer_hedge_wins{0};
  std::atomic<uint64_t> late_hedge_waits{0};
  std::atomic<uint64_t> queued_hedge_waits{0};
  std::atomic<uint64_t> give_up_fallbacks{0};
  std::atomic<uint64_t> loser_bytes{0};
  std::atomic<uint64_t> losers_released{0};
  std::atomic<int64_t> loser_release_nanos{0};
  LatencyHistogram latency_saved;
  std::atomic<uint64_t> coalesced_reads{0};
  std::atomic<uint64_t> fetches_saved{0};

  // Copies the counters into `upstream` (its policy values are the
  // caller's).
  void CopyTo(UpstreamSnapshot& upstream) const;
};

// One tenant slot's counters (hedge/tenants/tenant_table.h).
struct TenantCounters {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> rejected{0};
  std::atomic<uint64_t> hedges{0};
  std::atomic<uint64_t> hedge_wins{0};
};

// Engine-wide counters.
struct EngineCounters {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> rejected_overloaded{0};
  std::atomic<uint64_t> rejected_tenant_share{0};
  std::atomic<uint64_t> attempts{0};
  std::atomic<uint64_t> hedges{0};
  std::atomic<uint64_t> fallbacks{0};
  std::atomic<uint64_t> hedge_wins{0};
  std::atomic<uint64_t> timeouts{0};
  std::atomic<uint64_t> cancelled{0};
  std::atomic<uint64_t> backend_failures{0};
  std::array<std::atomic<uint64_t>, kSkipReasons> skipped{};  // by SkipReason
  std::atomic<int64_t> in_flight_requests{0};
  std::atomic<int64_t> in_flight_attempts{0};
  LatencyHistogram request_duration;

  // An attempt of `kind` launched: attempts, and hedges (and fallbacks).
  void CountLaunch(AttemptKind kind);
  void CountSkip(SkipReason reason) {
    skipped[static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);
  }
  // A read ended with `error` (timeouts and cancellations are counted).
  void CountReadError(ReadError error);
  // Copies the engine-wide counters into `snapshot`.
  void CopyTo(EngineSnapshot& snapshot) const;
};

// Adds 1 (or `delta`) to a relaxed atomic counter.
template <typename T>
void Bump(std::atomic<T>& counter, T delta = 1) {
  counter.fetch_add(delta, std::memory_order_relaxed);
}

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_ENGINE_COUNTERS_H_
