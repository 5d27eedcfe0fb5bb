// Engine: hedged HTTP reads against replica sets, over libcurl's multi
// interface. This is the transport's public API; its configuration is
// hedge/config/engine_config.h, its counters engine_snapshot.h.
//
// Example:
//   transport::CurlLoop loop(SteadyClock());  // the process's loop thread
//   loop.Start();
//   absl::StatusOr<std::unique_ptr<Engine>> engine =
//       Engine::Create(config, loop);
//   EngineRead read;
//   read.target = "/read?id=7";
//   read.deadline = SteadyClock().Now() + absl::Seconds(1);
//   absl::StatusOr<uint64_t> id = (*engine)->Submit(
//       std::move(read), [](absl::StatusOr<EngineResponse> result) { ... });
//
// Submit admits the read at once or refuses it at once (never queues); an
// admitted read completes exactly once, through its callback, on the engine
// loop thread — also when the engine is destroyed with the read in flight
// or still queued. The callback must not block: it runs on the thread that
// drives every read.
//
// Every non-OK status of a refusal or completion carries its cause as a
// hedge::ReadFailure (read_failure.h): map that, never the message. Codes:
//   NOT_FOUND           unknown upstream (refusal)
//   RESOURCE_EXHAUSTED  max_requests, or the upstream's own max_requests,
//                       reached, or the read's tenant holds its
//                       tenant_share of it (refusals); no attempt permit
//                       for the primary; or the response exceeded
//                       max_response_bytes
//   UNAVAILABLE         the upstream has no replica (its names resolved to
//                       no address yet: refusal); no eligible replica;
//                       every attempt failed at the transport level; the
//                       engine is shutting down
//   DEADLINE_EXCEEDED   the read's deadline passed
//   CANCELLED           Cancel() was called
// A 5xx forwarded because every attempt failed is an OK result. Messages
// never carry transport error text or replica addresses.
//
// On an upstream with `coalesce` (UpstreamConfig::coalesce), reads in
// flight at once with the same CoalesceKey (coalesce_key.h) share one
// upstream fetch and its hedge: each is still admitted, completed, timed
// out and cancelled as a read of its own, with its own copy of the
// answer; see engine_coalesce.cc.
//
// Replica sets change while reads run: SetUpstreams (a reload) and the
// refresh of `resolve` replicas' names (every refresh_interval, on a
// thread of the engine's own) publish a new generation of the sets; a
// read finishes on the generation it was admitted to, and a replica that
// left is drained: no new attempt, those in flight finish
// (upstream_directory.h).
//
// The loop is lent: the process owns the loop thread (curl/curl_loop.h)
// and lends it to the engine, which drives every read there, and to the
// front doors, guests that serve their connections on the same thread
// (event_loop.h). A read submitted from the loop thread starts in the same
// loop iteration, without a wake-up, and its callback, also on the loop
// thread, may answer the client directly: such a read never changes
// thread.
//
// Thread safety: Submit, Cancel, Snapshot and SetUpstreams are safe from
// any thread until the destructor starts (Submit and Cancel also from the
// loop thread: from a read's callback or a guest's event). The loop thread
// owns the CURLM handle, the event_base, every easy handle, every timer and
// every read's state (see curl_loop.h).

#ifndef TAILGATE_HEDGE_TRANSPORT_ENGINE_H_
#define TAILGATE_HEDGE_TRANSPORT_ENGINE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hedge/clock.h"
#include "hedge/config/engine_config.h"
#include "hedge/discovery/resolver.h"
#include "hedge/health/circuit_breaker.h"
#include "hedge/hygiene/http_hygiene.h"
#include "hedge/policy/batch_credits.h"
#include "hedge/transport/engine_snapshot.h"
#include "hedge/transport/read_failure.h"

namespace tailgate::hedge {

namespace transport {
class CurlLoop;
}  // namespace transport

// A validated read descriptor.
struct EngineRead {
  std::string upstream;  // "" = default set
  bool head = false;     // HEAD instead of GET
  std::string target;    // origin-form, validated
  std::vector<hygiene::HttpHeader>
      headers;  // sanitized (SanitizeRequestHeaders)
  // Engine clock. Submit caps it at EngineConfig::timeout; a shorter one is
  // the caller's, and its expiry is neutral for the replicas' breakers.
  absl::Time deadline = absl::InfiniteFuture();
  bool hedge_disabled = false;
  std::optional<absl::Duration> hedge_delay;  // positive, when requested
  // "" = no tenant (the tenant "" like any other). REQUIRES: valid
  // (hedge::ValidateTenantName).
  std::string tenant;
  // The batch (one ReadMany call) the read belongs to, shared by its
  // reads: they earn their hedge credit into it and their hedges spend it
  // first (hedge/policy/batch_credits.h). Null: a read of its own.
  std::shared_ptr<BatchCredits> batch;
};

struct ReadTrace {
  int attempts = 0;
  bool hedged = false;     // an extra attempt was launched
  bool hedge_won = false;  // the extra attempt answered
  std::string replica;     // label of the answering replica (ReplicaLabel)
  absl::Duration latency;  // admission to completion
};

struct EngineResponse {
  int status = 0;
  std::vector<hygiene::HttpHeader> headers;  // hop-by-hop removed
  std::string body;
  ReadTrace trace;
};

using ReadCallback = absl::AnyInvocable<void(absl::StatusOr<EngineResponse>)>;

// One lookup of a `resolve` replica's name (hedge/discovery), as the
// engine took it.
struct NameLookup {
  // OK, or why the lookup failed or found no address (then `addresses`
  // are the last good ones, kept).
  absl::Status status;
  // The name's addresses in force after the lookup, sorted; empty before
  // its first good answer.
  std::vector<std::string> addresses;
};

// A replica entering or leaving a Retry-After back-off (ReplicaPicker,
// Back-off), as the engine took it.
struct BackOffChange {
  bool backed_off = false;  // true: it began; false: it ended
  // Began: the overload answer's status (429, 503) and the wait it asked
  // for (capped at kMaxRetryAfter). Ended: zero.
  int status = 0;
  absl::Duration retry_after;
  // Ended: how long it was backed off, extensions included. Began: zero.
  absl::Duration lasted;
};

// Lifecycle events worth a log line. Must not block.
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  // A replica's health changed (serving, ejected, probing); see
  // CircuitBreaker. Called on the thread that reported the outcome.
  virtual void OnCircuitTransition(const std::string& upstream,
                                   const std::string& replica,
                                   const CircuitTransition& transition) = 0;
  // A name of `upstream` was looked up: every lookup, changed or not, on
  // the thread that made it (the refresher; Create's or Reload's caller
  // for a name new to the engine), after its answer is in force. Two
  // lookups of one name on different threads may arrive out of order.
  virtual void OnNameLookup(const std::string& /*upstream*/,
                            const std::string& /*name*/,
                            const NameLookup& /*lookup*/) {}
  // A replica of `upstream` began or ended a Retry-After back-off, on the
  // engine's loop thread: one call as it begins (a later Retry-After that
  // extends it makes none) and one as it ends, when the loop next runs
  // its timers after that. A back-off in force when the engine stops
  // makes no end call.
  virtual void OnReplicaBackOff(const std::string& /*upstream*/,
                                const std::string& /*replica*/,
                                const BackOffChange& /*change*/) {}
};

class Engine {
 public:
  // Validates `config` (ValidateEngineConfig, then what only the transport
  // knows, such as whether this libcurl can speak h2c; both as FieldErrors),
  // looks up the names of `resolve` replicas once (blocking the caller),
  // starts, with such names, the refresher, and attaches to `loop`, which
  // must be running and serve no other engine; the engine's clock is the
  // loop's. `loop`, `observer` (may be null) and `resolver` (null: the
  // system's, discovery::SystemResolver) must outlive the engine.
  static absl::StatusOr<std::unique_ptr<Engine>> Create(
      EngineConfig config, transport::CurlLoop& loop,
      EngineObserver* observer = nullptr,
      discovery::Resolver* resolver = nullptr);

  // What Create checks before it starts anything: ValidateEngineConfig,
  // then what only the transport knows. A FieldError names the bad field.
  static absl::Status CheckConfig(const EngineConfig& config);

  // Completes every read still in flight or queued with UNAVAILABLE, on the
  // loop thread, and gives the loop back (it keeps running for its owner).
  virtual ~Engine() = default;

  // Admits the read or refuses it at once. On success the id can be given
  // to Cancel, and `done` will be called exactly once on the loop thread.
  // On refusal `done` is not called. Ids are never reused, so a Cancel that
  // arrives after its read completed can never hit another read.
  virtual absl::StatusOr<uint64_t> Submit(EngineRead read,
                                          ReadCallback done) = 0;

  // Cancels the read: its attempts are aborted and it completes with
  // CANCELLED, unless it already completed (then nothing happens).
  virtual void Cancel(uint64_t read_id) = 0;

  // Replaces the replica sets: checks `upstreams` as Create would within
  // the engine-wide limits it runs with (a FieldError naming the field;
  // nothing changes then), looks up their new resolved names (blocking the
  // caller), and publishes them. Reads in flight finish on the sets they
  // started with; breaker, counter and budget state of what persists is
  // kept (upstream.h).
  virtual absl::Status SetUpstreams(std::vector<UpstreamConfig> upstreams) = 0;

  virtual EngineSnapshot Snapshot() const = 0;

  // Gives back what the loop keeps for reuse beyond a small reserve: the
  // transfer slots (easy handles with their buffers) a burst of attempts
  // left free. For an engine that has gone idle (server/process/idle_trim.h): a
  // busy one only loses warm handles it would make again. Blocks until the
  // loop has done it, for at most a second; returns at once if the loop has
  // stopped.
  virtual void ReleaseIdleMemory() {}

  // The engine's clock, for computing deadlines.
  virtual Clock& clock() const = 0;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_TRANSPORT_ENGINE_H_
