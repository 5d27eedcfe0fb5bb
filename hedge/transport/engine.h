// Engine: hedged HTTP reads against replica sets, over libcurl's multi
// interface.
//
// Example:
//   absl::StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(config);
//   EngineRead read;
//   read.target = "/read?id=7";
//   read.deadline = SteadyClock().Now() + absl::Seconds(1);
//   absl::StatusOr<uint64_t> id = (*engine)->Submit(
//       std::move(read), [](absl::StatusOr<EngineResponse> result) { ... });
//
// Submit admits the read at once or refuses it at once (never queues); an
// admitted read completes exactly once, through its callback, on the engine
// loop thread. The callback must not block: it runs on the thread that
// drives every read.
//
// Status codes of a refusal or completion (DESIGN.md "API contract"):
//   NOT_FOUND           unknown upstream (refusal)
//   RESOURCE_EXHAUSTED  max_requests reached (refusal); no attempt permit for
//                       the primary; or the response exceeded
//                       max_response_bytes
//   UNAVAILABLE         no eligible replica; every attempt failed at the
//                       transport level; the engine is shutting down
//   DEADLINE_EXCEEDED   the read's deadline passed
//   CANCELLED           Cancel() was called
// A 5xx forwarded because every attempt failed is an OK result. Messages
// never carry transport error text or replica addresses.
//
// Thread safety: Submit, Cancel and Snapshot are safe from any thread. The
// loop thread owns the CURLM handle, every easy handle, every timer and
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
#include "hedge/admission_limits.h"
#include "hedge/circuit_breaker.h"
#include "hedge/clock.h"
#include "hedge/hedge_budget.h"
#include "hedge/http_hygiene.h"
#include "hedge/latency_histogram.h"
#include "hedge/replica_url.h"
#include "hedge/transport/warm_connection_stats.h"

namespace tailgate::hedge {

enum class HttpVersion {
  kHttp1,  // HTTP/1.1 with keep-alive (default)
  kHttp2,  // h2 with prior knowledge for http://, ALPN for https://
};

// One replica set and its own policy settings.
struct UpstreamConfig {
  std::string name;  // "" is the default set
  std::vector<ReplicaUrl> replicas;
  HedgeBudgetConfig budget;
  CircuitConfig circuit;
  absl::Duration hedge_delay = absl::Milliseconds(25);
  HttpVersion http_version = HttpVersion::kHttp1;
  std::string ca_file;  // for https replicas; "" = system CAs
  // TCP connections kept open ahead of need per replica address, so an
  // attempt rarely waits for a handshake (warm_connections.h). 0 = none.
  int preconnect = 0;
};

struct EngineConfig {
  std::vector<UpstreamConfig> upstreams;
  AdmissionConfig admission;
  int64_t max_response_bytes = int64_t{4} << 20;
  absl::Duration timeout = absl::Seconds(1);  // cap on every read's deadline
  int max_response_headers = 100;
  int64_t max_response_header_bytes = 64 << 10;
  // The loop wakes this long before a timer (a hedge) is due and spins
  // until it is, instead of paying an idle CPU's wake-up on every hedge;
  // at most this much CPU per timer that fires (curl_loop.h). 0 disables.
  absl::Duration timer_spin = absl::Microseconds(100);
};

inline constexpr int64_t kMaxResponseBytesHardCap = int64_t{64} << 20;
inline constexpr int kMaxPreconnect = 16;  // UpstreamConfig::preconnect
// How long after a warm connection is handed out (or curl opens one of its
// own) its replacement is connected, counted from the first such need since
// the pool's last top-up: not in the iteration that sends the attempt's
// request (see warm_connections.h).
inline constexpr absl::Duration kPreconnectRefillDelay = absl::Milliseconds(1);
inline constexpr absl::Duration kMaxTimerSpin = absl::Milliseconds(1);

// Checks every field. Like the policy validators, each message starts with
// the name of the bad field ("max_response_bytes: ..."); the server turns
// that name into its flag's.
absl::Status ValidateEngineConfig(const EngineConfig& config);

// A validated read descriptor.
struct EngineRead {
  std::string upstream;               // "" = default set
  bool head = false;                  // HEAD instead of GET
  std::string target;                 // origin-form, validated
  std::vector<HttpHeader> headers;    // sanitized (SanitizeRequestHeaders)
  // Engine clock. Submit caps it at EngineConfig::timeout; a shorter one is
  // the caller's, and its expiry is neutral for the replicas' breakers.
  absl::Time deadline = absl::InfiniteFuture();
  bool hedge_disabled = false;
  std::optional<absl::Duration> hedge_delay;  // positive, when requested
};

struct ReadTrace {
  int attempts = 0;
  bool hedged = false;     // an extra attempt was launched
  bool hedge_won = false;  // the extra attempt answered
  std::string replica;     // configured URL of the answering replica
  absl::Duration latency;  // admission to completion
};

struct EngineResponse {
  int status = 0;
  std::vector<HttpHeader> headers;  // hop-by-hop removed
  std::string body;
  ReadTrace trace;
};

using ReadCallback = absl::AnyInvocable<void(absl::StatusOr<EngineResponse>)>;

// Counters since start; a consistent-enough view for metrics (each field is
// read atomically, not all fields at one instant).
struct ReplicaSnapshot {
  std::string upstream;
  std::string url;
  CircuitSnapshot circuit;
  uint64_t attempts_primary = 0;
  uint64_t attempts_hedge = 0;
  uint64_t attempts_fallback = 0;
  uint64_t failures = 0;
  int64_t in_flight = 0;
  HistogramSnapshot attempt_duration;
};

struct EngineSnapshot {
  uint64_t requests = 0;             // admitted
  uint64_t rejected_overloaded = 0;  // refused by max_requests
  uint64_t attempts = 0;
  uint64_t hedges = 0;     // extra attempts of either kind
  uint64_t fallbacks = 0;  // of which failure fallbacks
  uint64_t hedge_wins = 0;
  uint64_t timeouts = 0;
  uint64_t cancelled = 0;
  uint64_t backend_failures = 0;
  uint64_t skipped_no_replica = 0;  // extra attempts wanted but not taken
  uint64_t skipped_no_capacity = 0;
  uint64_t skipped_no_budget = 0;
  int64_t in_flight_requests = 0;
  int64_t in_flight_attempts = 0;
  double hedge_credits = 0;  // summed over upstreams
  // The loop's own cost: wake-ups, and how late its timers fired in total.
  uint64_t loop_iterations = 0;
  uint64_t timers_fired = 0;
  uint64_t timers_pending = 0;  // armed and neither fired nor cancelled
  WarmConnectionStats warm_connections;  // summed over upstreams
  absl::Duration timer_lateness_total;
  absl::Duration timer_spin_total;  // CPU time spent spinning for timers
  HistogramSnapshot request_duration;
  std::vector<ReplicaSnapshot> replicas;
};

// Lifecycle events worth a log line. Called on the loop thread; must not
// block.
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  virtual void OnCircuitTransition(const std::string& upstream,
                                   const std::string& replica,
                                   CircuitState from, CircuitState to,
                                   uint64_t generation) = 0;
};

class Engine {
 public:
  // Starts the loop thread. `clock` and `observer` (may be null) must
  // outlive the engine.
  static absl::StatusOr<std::unique_ptr<Engine>> Create(
      EngineConfig config, Clock& clock = SteadyClock(),
      EngineObserver* observer = nullptr);

  // Cancels every read still in flight (each completes with UNAVAILABLE),
  // stops the loop and joins it.
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

  virtual EngineSnapshot Snapshot() const = 0;

  // The engine's clock, for computing deadlines.
  virtual Clock& clock() const = 0;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_TRANSPORT_ENGINE_H_
