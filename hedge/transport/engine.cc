#include "hedge/transport/engine.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hedge/hedge_delay.h"
#include "hedge/read_decision.h"
#include "hedge/replica_picker.h"
#include "hedge/sync/mutex.h"
#include "hedge/transport/curl_loop.h"
#include "hedge/transport/http_attempt.h"
#include "hedge/transport/warm_connections.h"

namespace tailgate::hedge {
namespace {

enum class TimerKind : uint64_t { kHedge = 0, kDeadline = 1 };

uint64_t TimerKey(uint64_t read_id, TimerKind kind) {
  return (read_id << 1) | static_cast<uint64_t>(kind);
}

// Per-replica counters, written on the loop thread, read by Snapshot.
struct ReplicaCounters {
  std::array<std::atomic<uint64_t>, 3> attempts{};  // by AttemptKind
  std::atomic<uint64_t> failures{0};
  std::atomic<int64_t> in_flight{0};
  LatencyHistogram attempt_duration;
};

// One replica set with its own policy objects. Constant after construction
// except for the (thread-safe) policy objects and counters.
struct Upstream {
  Upstream(const UpstreamConfig& config, Clock& clock,
           EngineObserver* observer)
      : config(config),
        budget(config.budget),
        delay(std::make_unique<FixedHedgeDelay>(config.hedge_delay)),
        counters(config.replicas.size()),
        warm(clock, WarmConnections::Options{config.preconnect}) {
    std::vector<CircuitBreaker*> raw;
    for (const ReplicaUrl& replica : config.replicas) {
      CircuitBreaker::TransitionListener listener;
      if (observer != nullptr) {
        listener = [observer, upstream = config.name, url = replica.configured](
                       CircuitState from, CircuitState to, uint64_t generation) {
          observer->OnCircuitTransition(upstream, url, from, to, generation);
        };
      }
      breakers.push_back(
          std::make_unique<CircuitBreaker>(config.circuit, std::move(listener)));
      raw.push_back(breakers.back().get());
    }
    picker = std::make_unique<ReplicaPicker>(raw);
  }

  const UpstreamConfig config;
  std::vector<std::unique_ptr<CircuitBreaker>> breakers;
  std::unique_ptr<ReplicaPicker> picker;
  HedgeBudget budget;
  std::unique_ptr<HedgeDelayPolicy> delay;
  std::vector<ReplicaCounters> counters;
  WarmConnections warm;  // loop thread only, except its stats
};

// Engine-wide counters.
struct Counters {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> rejected_overloaded{0};
  std::atomic<uint64_t> attempts{0};
  std::atomic<uint64_t> hedges{0};
  std::atomic<uint64_t> fallbacks{0};
  std::atomic<uint64_t> hedge_wins{0};
  std::atomic<uint64_t> timeouts{0};
  std::atomic<uint64_t> cancelled{0};
  std::atomic<uint64_t> backend_failures{0};
  std::array<std::atomic<uint64_t>, 3> skipped{};  // by SkipReason
  std::atomic<int64_t> in_flight_requests{0};
  std::atomic<int64_t> in_flight_attempts{0};
  LatencyHistogram request_duration;
};

struct Read;

// A pooled transfer slot: which read and which of its attempts it serves.
struct AttemptSlot {
  HttpAttempt http;
  Read* read = nullptr;
  int index = -1;
  absl::Time started;
  bool in_multi = false;  // added to the multi handle and not removed yet
};

// One admitted read. Created by Submit, owned by the loop thread from the
// moment it is queued.
struct Read {
  Read(uint64_t id, Upstream* upstream, EngineRead request, ReadCallback done,
       Permit permit, AdmissionLimits* limits, absl::Time admitted,
       absl::Time deadline, DeadlineSource deadline_source,
       const ReadOptions& options)
      : id(id),
        upstream(upstream),
        request(std::move(request)),
        done(std::move(done)),
        permit(std::move(permit)),
        admitted(admitted),
        deadline(deadline),
        deadline_source(deadline_source),
        decision(ReadPolicy{upstream->picker.get(), &upstream->budget, limits},
                 options) {}

  const uint64_t id;
  Upstream* const upstream;
  const EngineRead request;
  ReadCallback done;
  Permit permit;  // the max_requests slot
  const absl::Time admitted;
  const absl::Time deadline;
  const DeadlineSource deadline_source;  // whose deadline `deadline` is
  ReadDecision decision;
  std::array<AttemptSlot*, kMaxAttempts> slots{};
};

const char* const kOverloadedMessage = "too many concurrent reads (max_requests)";

class EngineImpl final : public Engine, private CurlLoop::Callbacks {
 public:
  EngineImpl(EngineConfig config, Clock& clock, EngineObserver* observer)
      : config_(std::move(config)),
        clock_(clock),
        limits_(config_.admission),
        attempt_limits_{config_.max_response_bytes,
                        config_.max_response_headers,
                        config_.max_response_header_bytes},
        loop_(clock, *this,
              CurlLoop::Options{
                  static_cast<long>(config_.admission.max_attempts),
                  config_.timer_spin}) {
    for (const UpstreamConfig& upstream : config_.upstreams) {
      upstreams_.push_back(
          std::make_unique<Upstream>(upstream, clock_, observer));
    }
  }

  ~EngineImpl() override {
    loop_.Stop();
    // Reads still queued never reached the loop: complete them here.
    std::vector<std::unique_ptr<Read>> queued;
    {
      MutexLock lock(&inbox_mu_);
      queued.swap(submitted_);
    }
    for (auto& read : queued) CompleteUnstarted(*read);
  }

  absl::Status Start() { return loop_.Start(); }

  absl::StatusOr<uint64_t> Submit(EngineRead request,
                                  ReadCallback done) override {
    Upstream* upstream = FindUpstream(request.upstream);
    if (upstream == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("unknown upstream \"", request.upstream, "\""));
    }
    std::optional<Permit> permit = limits_.TryAdmitRequest();
    if (!permit.has_value()) {
      counters_.rejected_overloaded.fetch_add(1, std::memory_order_relaxed);
      return absl::ResourceExhaustedError(
          absl::StrCat(kOverloadedMessage, "=", limits_.requests().capacity()));
    }
    const absl::Time now = clock_.Now();
    const absl::Time timeout_deadline = now + config_.timeout;
    const absl::Time deadline = std::min(request.deadline, timeout_deadline);
    const DeadlineSource deadline_source = request.deadline < timeout_deadline
                                               ? DeadlineSource::kCaller
                                               : DeadlineSource::kSidecarTimeout;
    ReadOptions options;
    options.hedge_disabled = request.hedge_disabled;
    options.hedge_delay = upstream->delay->DelayFor(request.hedge_delay);
    // An attempt that had half the sidecar's timeout and did not answer
    // has failed; a younger one (a late fallback or hedge) had no chance.
    options.timeout_blame_age = config_.timeout / 2;
    upstream->budget.OnAdmission();
    counters_.requests.fetch_add(1, std::memory_order_relaxed);
    counters_.in_flight_requests.fetch_add(1, std::memory_order_relaxed);

    const uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
    auto read = std::make_unique<Read>(id, upstream, std::move(request),
                                       std::move(done), std::move(*permit),
                                       &limits_, now, deadline,
                                       deadline_source, options);
    bool wake;
    {
      MutexLock lock(&inbox_mu_);
      wake = submitted_.empty() && cancelled_.empty();
      submitted_.push_back(std::move(read));
    }
    if (wake) loop_.Wakeup();
    return id;
  }

  void Cancel(uint64_t read_id) override {
    bool wake;
    {
      MutexLock lock(&inbox_mu_);
      wake = submitted_.empty() && cancelled_.empty();
      cancelled_.push_back(read_id);
    }
    if (wake) loop_.Wakeup();
  }

  EngineSnapshot Snapshot() const override;

  Clock& clock() const override { return clock_; }

 private:
  Upstream* FindUpstream(const std::string& name) const {
    for (const auto& upstream : upstreams_) {
      if (upstream->config.name == name) return upstream.get();
    }
    return nullptr;
  }

  // CurlLoop::Callbacks, all on the loop thread.
  void OnWakeup() override;
  void OnTimer(uint64_t key) override;
  void OnTransferDone(CURL* easy, CURLcode result) override;
  absl::Time BeforeWait() override;
  void OnStop() override;

  void Execute(Read& read, const Actions& actions);
  // Returns false when the attempt could not be started.
  bool Launch(Read& read, const Action& action);
  // A cancelled attempt is uncounted at once, but its handle is detached
  // (closing its connection) only by Finish, after the caller has heard
  // back: the answer does not wait for the connection's teardown.
  void Uncount(Read& read, int attempt);
  void CountFailure(Upstream& upstream, size_t replica);
  void Detach(AttemptSlot* slot);
  void Finish(Read& read, const Action& action);
  void EndAttempt(AttemptSlot* slot);
  absl::Status ErrorStatus(ReadError error) const;
  void CompleteUnstarted(Read& read);

  AttemptSlot* TakeSlot();

  // Constant after construction.
  const EngineConfig config_;
  Clock& clock_;
  std::vector<std::unique_ptr<Upstream>> upstreams_;
  AdmissionLimits limits_;
  const AttemptLimits attempt_limits_;
  Counters counters_;
  std::atomic<uint64_t> next_id_{1};

  // (hedge::Mutex rather than absl::Mutex: see hedge/sync/mutex.h.)
  Mutex inbox_mu_;
  std::vector<std::unique_ptr<Read>> submitted_ ABSL_GUARDED_BY(inbox_mu_);
  std::vector<uint64_t> cancelled_ ABSL_GUARDED_BY(inbox_mu_);

  // Loop thread only.
  absl::flat_hash_map<uint64_t, std::unique_ptr<Read>> reads_;
  std::vector<std::unique_ptr<AttemptSlot>> all_slots_;  // owns every slot
  std::vector<AttemptSlot*> free_slots_;
  bool stopping_ = false;

  CurlLoop loop_;  // last: stopped before the state above goes away
};

void EngineImpl::OnWakeup() {
  std::vector<std::unique_ptr<Read>> submitted;
  std::vector<uint64_t> cancelled;
  {
    MutexLock lock(&inbox_mu_);
    if (submitted_.empty() && cancelled_.empty()) return;
    submitted.swap(submitted_);
    cancelled.swap(cancelled_);
  }
  const absl::Time now = clock_.Now();
  for (auto& owned : submitted) {
    Read& read = *owned;
    reads_.emplace(read.id, std::move(owned));
    loop_.ArmTimer(read.deadline, TimerKey(read.id, TimerKind::kDeadline));
    // From admission, like the deadline: the hedge delay counts the time
    // the read waited for this loop thread to wake up.
    Execute(read, read.decision.Start(read.admitted));
  }
  for (uint64_t id : cancelled) {
    auto it = reads_.find(id);
    if (it != reads_.end()) Execute(*it->second, it->second->decision.OnCancel(now));
  }
}

void EngineImpl::OnTimer(uint64_t key) {
  auto it = reads_.find(key >> 1);
  if (it == reads_.end()) return;  // finished before its timer
  Read& read = *it->second;
  const absl::Time now = clock_.Now();
  if (static_cast<TimerKind>(key & 1) == TimerKind::kDeadline) {
    Execute(read, read.decision.OnDeadline(now, read.deadline_source));
  } else {
    Execute(read, read.decision.OnHedgeTimer(now));
  }
}

void EngineImpl::OnTransferDone(CURL* easy, CURLcode result) {
  void* owner = nullptr;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, &owner);
  auto* slot = static_cast<AttemptSlot*>(owner);
  Detach(slot);
  Read& read = *slot->read;
  const AttemptOutcome outcome = slot->http.Classify(result);
  const absl::Time now = clock_.Now();
  ReplicaCounters& replica =
      read.upstream->counters[read.decision.replica(slot->index)];
  replica.attempt_duration.Record(now - slot->started);
  if (outcome != AttemptOutcome::kSuccess) {
    CountFailure(*read.upstream, read.decision.replica(slot->index));
    read.upstream->warm.ForgetPeerOf(easy);
  } else {
    read.upstream->delay->ObserveLatency(now - slot->started);
  }
  replica.in_flight.fetch_sub(1, std::memory_order_relaxed);
  counters_.in_flight_attempts.fetch_sub(1, std::memory_order_relaxed);
  // The slot keeps the response until Finish takes it or the read ends.
  Execute(read, read.decision.OnAttemptDone(slot->index, outcome, now));
}

absl::Time EngineImpl::BeforeWait() {
  absl::Time next = absl::InfiniteFuture();
  for (auto& upstream : upstreams_) {
    next = std::min(next, upstream->warm.Refill());
  }
  return next;
}

void EngineImpl::OnStop() {
  stopping_ = true;
  const absl::Time now = clock_.Now();
  std::vector<uint64_t> ids;
  ids.reserve(reads_.size());
  for (const auto& [id, read] : reads_) ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = reads_.find(id);
    if (it != reads_.end()) Execute(*it->second, it->second->decision.OnCancel(now));
  }
}

void EngineImpl::Execute(Read& read, const Actions& actions) {
  int failed_launch = -1;
  for (const Action& action : actions) {
    switch (action.type) {
      case Action::Type::kLaunch:
        if (!Launch(read, action)) failed_launch = action.attempt;
        break;
      case Action::Type::kArmHedgeTimer:
        loop_.ArmTimer(action.at, TimerKey(read.id, TimerKind::kHedge));
        break;
      case Action::Type::kCancel:
        // Always followed by the read's kFinish, which detaches the handle.
        if (action.timed_out) {
          CountFailure(*read.upstream, read.decision.replica(action.attempt));
          if (read.slots[action.attempt] != nullptr) {
            read.upstream->warm.ForgetPeerOf(
                read.slots[action.attempt]->http.handle());
          }
        }
        Uncount(read, action.attempt);
        break;
      case Action::Type::kExtraSkipped:
        counters_.skipped[static_cast<int>(action.skip)].fetch_add(
            1, std::memory_order_relaxed);
        break;
      case Action::Type::kFinish:
        Finish(read, action);
        return;  // `read` is gone
    }
  }
  if (failed_launch >= 0) {
    // Could not even start the transfer: the replica failed, as far as the
    // read is concerned.
    Execute(read, read.decision.OnAttemptDone(
                      failed_launch, AttemptOutcome::kTransportError,
                      clock_.Now()));
  }
}

AttemptSlot* EngineImpl::TakeSlot() {
  if (free_slots_.empty()) {
    all_slots_.push_back(std::make_unique<AttemptSlot>());
    return all_slots_.back().get();
  }
  AttemptSlot* slot = free_slots_.back();
  free_slots_.pop_back();
  return slot;
}

bool EngineImpl::Launch(Read& read, const Action& action) {
  Upstream& upstream = *read.upstream;
  AttemptSlot* slot = TakeSlot();
  slot->read = &read;
  slot->index = action.attempt;
  slot->started = clock_.Now();
  read.slots[action.attempt] = slot;

  AttemptRequest request;
  request.url = BuildAttemptUrl(upstream.config.replicas[action.replica],
                                read.request.target);
  request.head = read.request.head;
  request.headers = &read.request.headers;
  request.http_version = upstream.config.http_version;
  request.ca_file = &upstream.config.ca_file;
  request.warm = &upstream.warm;

  ReplicaCounters& replica = upstream.counters[action.replica];
  replica.attempts[static_cast<int>(action.kind)].fetch_add(
      1, std::memory_order_relaxed);
  counters_.attempts.fetch_add(1, std::memory_order_relaxed);
  if (action.kind != AttemptKind::kPrimary) {
    counters_.hedges.fetch_add(1, std::memory_order_relaxed);
    if (action.kind == AttemptKind::kFallback) {
      counters_.fallbacks.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (!slot->http.Prepare(request, attempt_limits_, slot).ok() ||
      !loop_.AddTransfer(slot->http.handle()).ok()) {
    CountFailure(upstream, action.replica);
    EndAttempt(slot);
    read.slots[action.attempt] = nullptr;
    return false;
  }
  slot->in_multi = true;
  replica.in_flight.fetch_add(1, std::memory_order_relaxed);
  counters_.in_flight_attempts.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void EngineImpl::Uncount(Read& read, int attempt) {
  if (read.slots[attempt] == nullptr) return;
  ReplicaCounters& replica =
      read.upstream->counters[read.decision.replica(attempt)];
  replica.in_flight.fetch_sub(1, std::memory_order_relaxed);
  counters_.in_flight_attempts.fetch_sub(1, std::memory_order_relaxed);
}

void EngineImpl::CountFailure(Upstream& upstream, size_t replica) {
  upstream.counters[replica].failures.fetch_add(1, std::memory_order_relaxed);
  counters_.backend_failures.fetch_add(1, std::memory_order_relaxed);
}

void EngineImpl::Detach(AttemptSlot* slot) {
  if (!slot->in_multi) return;
  slot->in_multi = false;
  // Removing an unfinished transfer closes its connection, so the replica
  // sees the loser go away.
  loop_.RemoveTransfer(slot->http.handle());
}

void EngineImpl::EndAttempt(AttemptSlot* slot) {
  slot->read = nullptr;
  slot->index = -1;
  free_slots_.push_back(slot);
}

absl::Status EngineImpl::ErrorStatus(ReadError error) const {
  switch (error) {
    case ReadError::kOverloaded:
      return absl::ResourceExhaustedError(
          absl::StrCat("too many concurrent upstream attempts (max_attempts=",
                       limits_.attempts().capacity(), ")"));
    case ReadError::kNoReplica:
      return absl::UnavailableError(
          "no replica available: every circuit is open");
    case ReadError::kDeadlineExceeded:
      return absl::DeadlineExceededError(
          "deadline exceeded before a replica answered");
    case ReadError::kCancelled:
      if (stopping_) return absl::UnavailableError("tailgate is shutting down");
      return absl::CancelledError("read cancelled by the caller");
    case ReadError::kTooLarge:
      return absl::ResourceExhaustedError(
          absl::StrCat("response exceeds max_response_bytes (",
                       config_.max_response_bytes, ")"));
    case ReadError::kUpstreamFailure:
      return absl::UnavailableError("every attempt failed to reach a replica");
  }
  return absl::InternalError("unknown read error");
}

void EngineImpl::Finish(Read& read, const Action& action) {
  const absl::Time now = clock_.Now();
  absl::StatusOr<EngineResponse> result;
  if (action.attempt >= 0) {
    AttemptSlot* slot = read.slots[action.attempt];
    EngineResponse response;
    response.status = slot->http.status();
    response.headers = SanitizeResponseHeaders(slot->http.TakeHeaders());
    response.body = slot->http.TakeBody();
    const AttemptKind kind = read.decision.kind(action.attempt);
    response.trace.attempts = read.decision.attempts_launched();
    response.trace.hedged = read.decision.attempts_launched() > 1;
    response.trace.hedge_won = kind != AttemptKind::kPrimary;
    response.trace.replica =
        read.upstream->config.replicas[read.decision.replica(action.attempt)]
            .configured;
    response.trace.latency = now - read.admitted;
    if (response.trace.hedge_won) {
      counters_.hedge_wins.fetch_add(1, std::memory_order_relaxed);
    }
    result = std::move(response);
  } else {
    if (action.error == ReadError::kDeadlineExceeded) {
      counters_.timeouts.fetch_add(1, std::memory_order_relaxed);
    } else if (action.error == ReadError::kCancelled) {
      counters_.cancelled.fetch_add(1, std::memory_order_relaxed);
    }
    result = ErrorStatus(action.error);
  }
  counters_.request_duration.Record(now - read.admitted);
  counters_.in_flight_requests.fetch_sub(1, std::memory_order_relaxed);

  // Its timers would only wake the loop for nothing.
  loop_.CancelTimer(TimerKey(read.id, TimerKind::kHedge));
  loop_.CancelTimer(TimerKey(read.id, TimerKind::kDeadline));
  auto node = reads_.extract(read.id);
  std::unique_ptr<Read> owned = std::move(node.mapped());
  // Free the max_requests slot before the caller hears back, so a caller that
  // reads sequentially is never refused by its own previous read.
  owned->permit.Release();
  ReadCallback done = std::move(owned->done);
  done(std::move(result));
  // Only now close the losers still transferring (already uncounted by
  // Execute): the answer does not wait for their connections' teardown.
  for (AttemptSlot*& slot : owned->slots) {
    if (slot == nullptr) continue;
    Detach(slot);
    EndAttempt(std::exchange(slot, nullptr));
  }
}

void EngineImpl::CompleteUnstarted(Read& read) {
  counters_.in_flight_requests.fetch_sub(1, std::memory_order_relaxed);
  read.permit.Release();
  read.done(absl::UnavailableError("tailgate is shutting down"));
}

EngineSnapshot EngineImpl::Snapshot() const {
  EngineSnapshot s;
  auto load = [](const auto& counter) {
    return counter.load(std::memory_order_relaxed);
  };
  s.requests = load(counters_.requests);
  s.rejected_overloaded = load(counters_.rejected_overloaded);
  s.attempts = load(counters_.attempts);
  s.hedges = load(counters_.hedges);
  s.fallbacks = load(counters_.fallbacks);
  s.hedge_wins = load(counters_.hedge_wins);
  s.timeouts = load(counters_.timeouts);
  s.cancelled = load(counters_.cancelled);
  s.backend_failures = load(counters_.backend_failures);
  s.skipped_no_replica =
      load(counters_.skipped[static_cast<int>(SkipReason::kNoReplica)]);
  s.skipped_no_capacity =
      load(counters_.skipped[static_cast<int>(SkipReason::kNoCapacity)]);
  s.skipped_no_budget =
      load(counters_.skipped[static_cast<int>(SkipReason::kNoBudget)]);
  s.in_flight_requests = load(counters_.in_flight_requests);
  s.in_flight_attempts = load(counters_.in_flight_attempts);
  s.loop_iterations = loop_.iterations();
  s.timers_fired = loop_.timers_fired();
  s.timers_pending = loop_.pending_timers();
  s.timer_lateness_total = loop_.total_timer_lateness();
  s.timer_spin_total = loop_.total_timer_spin();
  s.request_duration = counters_.request_duration.Snapshot();
  for (const auto& upstream : upstreams_) {
    s.hedge_credits += upstream->budget.credits();
    const WarmConnectionStats warm = upstream->warm.stats();
    s.warm_connections.opened += warm.opened;
    s.warm_connections.used += warm.used;
    s.warm_connections.discarded += warm.discarded;
    s.warm_connections.idle += warm.idle;
    for (size_t i = 0; i < upstream->config.replicas.size(); ++i) {
      const ReplicaCounters& counters = upstream->counters[i];
      ReplicaSnapshot replica;
      replica.upstream = upstream->config.name;
      replica.url = upstream->config.replicas[i].configured;
      replica.circuit = upstream->breakers[i]->Snapshot();
      replica.attempts_primary =
          load(counters.attempts[static_cast<int>(AttemptKind::kPrimary)]);
      replica.attempts_hedge =
          load(counters.attempts[static_cast<int>(AttemptKind::kHedge)]);
      replica.attempts_fallback =
          load(counters.attempts[static_cast<int>(AttemptKind::kFallback)]);
      replica.failures = load(counters.failures);
      replica.in_flight = load(counters.in_flight);
      replica.attempt_duration = counters.attempt_duration.Snapshot();
      s.replicas.push_back(std::move(replica));
    }
  }
  return s;
}

// libcurl before 8.0.0 fails every transfer that reuses an h2c
// prior-knowledge connection ("Error in the HTTP2 framing layer", fixed in
// curl 8.0.0); with keep-alive that is every read but the first. HTTP/2 over
// TLS (ALPN) is not affected.
absl::Status CheckHttp2Support(const UpstreamConfig& upstream) {
  if (upstream.http_version != HttpVersion::kHttp2) return absl::OkStatus();
  const curl_version_info_data* curl = curl_version_info(CURLVERSION_NOW);
  if (curl->version_num >= 0x080000) return absl::OkStatus();
  for (const ReplicaUrl& replica : upstream.replicas) {
    if (replica.scheme == "http") {
      return absl::InvalidArgumentError(absl::StrCat(
          "backend_http2: HTTP/2 to an http:// replica (h2c) needs libcurl "
          "8.0.0 or later (this is ",
          curl->version, "); use https replicas or HTTP/1.1"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateEngineConfig(const EngineConfig& config) {
  if (config.upstreams.empty()) {
    return absl::InvalidArgumentError("backends: no replica set configured");
  }
  for (const UpstreamConfig& upstream : config.upstreams) {
    if (upstream.replicas.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("backends: upstream \"", upstream.name, "\" has no replica"));
    }
    if (absl::Status s = ValidateHedgeBudgetConfig(upstream.budget); !s.ok()) {
      return s;
    }
    if (absl::Status s = ValidateCircuitConfig(upstream.circuit); !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckHttp2Support(upstream); !s.ok()) return s;
    if (upstream.hedge_delay <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError("hedge_delay: must be positive");
    }
    if (upstream.preconnect < 0 || upstream.preconnect > kMaxPreconnect) {
      return absl::InvalidArgumentError(
          absl::StrCat("preconnect: must be in [0, ", kMaxPreconnect,
                       "], got ", upstream.preconnect));
    }
  }
  for (size_t i = 0; i < config.upstreams.size(); ++i) {
    for (size_t j = i + 1; j < config.upstreams.size(); ++j) {
      if (config.upstreams[i].name == config.upstreams[j].name) {
        return absl::InvalidArgumentError(absl::StrCat(
            "upstreams: duplicate name \"", config.upstreams[i].name, "\""));
      }
    }
  }
  if (config.timer_spin < absl::ZeroDuration() ||
      config.timer_spin > kMaxTimerSpin) {
    return absl::InvalidArgumentError(absl::StrCat(
        "timer_spin: must be in [0, ", absl::FormatDuration(kMaxTimerSpin),
        "], got ", absl::FormatDuration(config.timer_spin)));
  }
  if (absl::Status s = ValidateAdmissionConfig(config.admission); !s.ok()) {
    return s;
  }
  if (config.max_response_bytes < 0 ||
      config.max_response_bytes > kMaxResponseBytesHardCap) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_response_bytes: must be in [0, ",
                     kMaxResponseBytesHardCap, "], got ",
                     config.max_response_bytes));
  }
  if (config.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("timeout: must be positive");
  }
  if (config.max_response_headers < 1 || config.max_response_header_bytes < 1) {
    return absl::InvalidArgumentError(
        "max_response_headers: limits must be positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(EngineConfig config,
                                                       Clock& clock,
                                                       EngineObserver* observer) {
  if (absl::Status s = ValidateEngineConfig(config); !s.ok()) return s;
  static std::once_flag curl_init;
  std::call_once(curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  auto engine = std::make_unique<EngineImpl>(std::move(config), clock, observer);
  if (absl::Status s = engine->Start(); !s.ok()) return s;
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace tailgate::hedge
