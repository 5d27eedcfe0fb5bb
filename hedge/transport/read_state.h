// Read and AttemptSlot: the state of one admitted read and of one of its
// HTTP attempts, as the engine's loop thread keeps them.
//
// Thread safety: a Read is built by Submit on the caller's thread and
// handed to the loop thread through the ReadInbox; from then on it, and
// every AttemptSlot, is loop thread only.

#ifndef TAILGATE_HEDGE_TRANSPORT_READ_STATE_H_
#define TAILGATE_HEDGE_TRANSPORT_READ_STATE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "hedge/decision/read_decision.h"
#include "hedge/policy/admission_limits.h"
#include "hedge/transport/curl/http_attempt.h"
#include "hedge/transport/engine.h"
#include "hedge/transport/upstream.h"

namespace tailgate::hedge::transport {

struct Read;
struct Probe;

// A pooled transfer slot: which read and which of its attempts it serves,
// or which probe.
struct AttemptSlot {
  HttpAttempt http;
  Read* read = nullptr;
  int index = -1;
  Probe* probe = nullptr;  // set instead of `read` for a probe
  absl::Time started;
  bool in_multi = false;  // added to the multi handle and not removed yet
};

// One admitted read.
struct Read {
  Read(uint64_t id, std::shared_ptr<Upstream> held, EngineRead request,
       ReadCallback done, Permit permit, Permit upstream_permit, int tenant,
       Permit tenant_permit, AdmissionLimits& limits, absl::Time admitted,
       absl::Time deadline, DeadlineSource deadline_source,
       const ReadOptions& options)
      : id(id),
        held_upstream(std::move(held)),
        upstream(*held_upstream),
        request(std::move(request)),
        done(std::move(done)),
        permit(std::move(permit)),
        upstream_permit(std::move(upstream_permit)),
        tenant(tenant),
        tenant_permit(std::move(tenant_permit)),
        admitted(admitted),
        deadline(deadline),
        deadline_source(deadline_source),
        options(options),
        decision(ReadPolicy{&upstream.picker(), &upstream.budget(),
                            &upstream.retry_budget(), &limits,
                            upstream.tenant_credits(), tenant,
                            &upstream.payoff(), this->request.batch.get()},
                 options) {}

  // The replica attempt `attempt` went to, and its counters.
  size_t replica(int attempt) const { return decision.replica(attempt); }
  ReplicaCounters& counters(int attempt) const {
    return upstream.counters(replica(attempt));
  }

  const uint64_t id;
  // The generation the read was admitted to: it finishes on it, whatever
  // a reload or a new DNS answer publishes meanwhile. Declared before the
  // permits, so that they are released before it may go.
  const std::shared_ptr<Upstream> held_upstream;
  Upstream& upstream;  // *held_upstream
  const EngineRead request;
  ReadCallback done;
  Permit permit;           // the max_requests slot
  Permit upstream_permit;  // the upstream's own max_requests slot, if any
  const int tenant;        // its tenant's slot (hedge/tenants/tenant_table.h)
  Permit tenant_permit;    // the slot's share of max_requests
  const absl::Time admitted;
  const absl::Time deadline;
  const DeadlineSource deadline_source;  // whose deadline `deadline` is
  const ReadOptions options;             // as admitted
  ReadDecision decision;
  std::array<AttemptSlot*, kMaxAttempts> slots{};  // null: none in flight
  // The wait the armed hedge timer stands for, from admission (the
  // decision's hedge or late hedge delay): the engine counts it from when
  // the primary's transfer began instead (engine_loop.cc, OnTimer).
  absl::Duration hedge_wait;

  // Coalescing (UpstreamConfig::coalesce; engine_coalesce.cc). A read of
  // a coalescing upstream is a caller: it never runs its own decision,
  // and waits on `fetch`, a read of the engine's own (`shared_fetch`,
  // without permits and never seen by a caller) whose decision runs the
  // attempts for every caller in `callers` (arrival order) and whose
  // answer each of them gets a copy of.
  bool shared_fetch = false;
  std::string fetch_key;       // a shared fetch's CoalesceKey
  std::vector<Read*> callers;  // a shared fetch's callers still waiting
  Read* fetch = nullptr;       // a caller's fetch, until it completes
};

// A probe of an ejected replica (CircuitBreaker): a transfer of the
// engine's own, never a user's attempt. It carries its own copy of what
// it sends, since the read it may copy can end first.
struct Probe {
  uint64_t id = 0;
  std::shared_ptr<Upstream> upstream;  // the generation it was sent in
  size_t replica = 0;
  CircuitTicket ticket;
  Permit permit;  // an attempt slot of max_attempts
  bool head = false;
  std::string target;
  std::vector<hygiene::HttpHeader> headers;
  AttemptSlot* slot = nullptr;  // null once released
  // Past this it has failed: it ran past the upstream's give-up point.
  absl::Time give_up_at;
};

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_READ_STATE_H_
