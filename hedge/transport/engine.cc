// EngineImpl: the executor of ReadDecision's actions on the CurlLoop.
//
// Submit (any thread) admits a read and queues it in the ReadInbox; the loop
// thread starts it, and from then on every event — a transfer done, a timer,
// a cancellation — goes to the read's ReadDecision, whose actions Execute
// carries out: launch an attempt, arm the hedge timer, cancel an attempt,
// count a skipped extra attempt, finish the read.

#include "hedge/transport/engine.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hedge/config/engine_config.h"
#include "hedge/hedge_delay.h"
#include "hedge/read_decision.h"
#include "hedge/sync/thread_checker.h"
#include "hedge/tenant_table.h"
#include "hedge/transport/attempt_slots.h"
#include "hedge/transport/curl_loop.h"
#include "hedge/transport/curl_support.h"
#include "hedge/transport/engine_counters.h"
#include "hedge/transport/http_attempt.h"
#include "hedge/transport/read_inbox.h"
#include "hedge/transport/read_result.h"
#include "hedge/transport/read_state.h"
#include "hedge/transport/upstream.h"
#include "hedge/transport/upstream_directory.h"

namespace tailgate::hedge::transport {
namespace {

enum class TimerKind : uint64_t { kHedge = 0, kDeadline = 1 };

uint64_t TimerKey(uint64_t read_id, TimerKind kind) {
  return (read_id << 1) | static_cast<uint64_t>(kind);
}

constexpr char kShuttingDown[] = "tailgate is shutting down";

class EngineImpl final : public Engine, private CurlLoop::Callbacks {
 public:
  EngineImpl(EngineConfig config, Clock& clock, EngineObserver* observer,
             discovery::Resolver* resolver)
      : config_(std::move(config)),
        clock_(clock),
        own_resolver_(resolver == nullptr
                          ? std::make_unique<discovery::SystemResolver>()
                          : nullptr),
        upstreams_(config_, clock, observer,
                   resolver == nullptr ? *own_resolver_ : *resolver),
        limits_(config_.admission),
        tenants_(config_.admission.max_requests, config_.tenant_share),
        loop_(
            clock, *this,
            CurlLoop::Options{static_cast<long>(config_.admission.max_attempts),
                              config_.timer_spin}) {}

  // OnStop completes every read, queued ones included, on the loop thread.
  ~EngineImpl() override { loop_.Stop(); }

  absl::Status Start() {
    upstreams_.Replace(config_.upstreams);
    upstreams_.StartRefresher();
    return loop_.Start();
  }

  absl::StatusOr<uint64_t> Submit(EngineRead request,
                                  ReadCallback done) override;
  void Cancel(uint64_t read_id) override;
  absl::Status SetUpstreams(std::vector<UpstreamConfig> upstreams) override;
  EngineSnapshot Snapshot() const override;
  Clock& clock() const override { return clock_; }

 private:
  // CurlLoop::Callbacks, all on the loop thread.
  void OnWakeup() override;
  void OnTimer(uint64_t key) override;
  void OnTransferDone(CURL* easy, CURLcode result) override;
  absl::Time BeforeWait() override;
  void OnStop() override;

  // The actions' executors, loop thread only.
  void Execute(Read& read, const Actions& actions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Returns false when the attempt could not be started.
  bool Launch(Read& read, const Action& action)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // A cancelled attempt is uncounted at once, but its handle is detached
  // (closing its connection) only by Finish, after the caller has heard
  // back: the answer does not wait for the connection's teardown.
  void CancelAttempt(Read& read, const Action& action)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void Finish(Read& read, const Action& action)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // The read's timer hedge answered it: the hedge accounting.
  void CountTimerHedgeWin(Read& read, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);

  void Start(std::unique_ptr<Read> read, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void CountFailure(Upstream& upstream, size_t replica);
  void Uncount(ReplicaCounters& replica);
  void Detach(AttemptSlot* slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void CompleteUnstarted(Read& read)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);

  // Constant after construction (config_.upstreams: the sets at start).
  const EngineConfig config_;
  Clock& clock_;
  const std::unique_ptr<discovery::Resolver> own_resolver_;  // may be null
  // The current replica sets; safe from any thread.
  UpstreamDirectory upstreams_;
  AdmissionLimits limits_;
  TenantTable tenants_;
  EngineCounters counters_;
  std::array<TenantCounters, TenantTable::kSlots> tenant_counters_;
  std::atomic<uint64_t> next_id_{1};

  ReadInbox inbox_;  // callers -> loop thread

  // Loop thread only: the first callback binds the checker to it.
  ThreadChecker loop_thread_;
  absl::flat_hash_map<uint64_t, std::unique_ptr<Read>> reads_
      ABSL_GUARDED_BY(loop_thread_);
  AttemptSlotPool slots_ ABSL_GUARDED_BY(loop_thread_);
  // The generation whose resolved addresses were last warmed (Expect).
  std::shared_ptr<const UpstreamSet> warmed_set_ ABSL_GUARDED_BY(loop_thread_);
  bool stopping_ ABSL_GUARDED_BY(loop_thread_) = false;

  CurlLoop loop_;  // last: stopped before the state above goes away
};

absl::StatusOr<uint64_t> EngineImpl::Submit(EngineRead request,
                                            ReadCallback done) {
  std::shared_ptr<Upstream> upstream = upstreams_.Find(request.upstream);
  if (upstream == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("unknown upstream \"", request.upstream, "\""));
  }
  if (upstream->size() == 0) {
    return absl::UnavailableError(
        absl::StrCat("upstream \"", request.upstream,
                     "\" has no replica: its names resolved to no address"));
  }
  const int tenant = tenants_.SlotOf(request.tenant);
  TenantCounters& tenant_counters = tenant_counters_[tenant];
  std::optional<Permit> permit = limits_.TryAdmitRequest();
  if (!permit.has_value()) {
    Bump(counters_.rejected_overloaded);
    Bump(tenant_counters.rejected);
    return absl::ResourceExhaustedError(
        absl::StrCat("too many concurrent reads (max_requests=",
                     limits_.requests().capacity(), ")"));
  }
  std::optional<Permit> upstream_permit = upstream->TryAdmit();
  if (!upstream_permit.has_value()) {
    Bump(counters_.rejected_overloaded);
    Bump(tenant_counters.rejected);
    return absl::ResourceExhaustedError(absl::StrCat(
        "too many concurrent reads of upstream \"", request.upstream,
        "\" (its max_requests=", upstream->max_requests(), ")"));
  }
  // Taken after the max_requests slots and given back before them (Finish),
  // so a tenant never holds more than the reads in flight: with a share
  // of 1 this never refuses.
  std::optional<Permit> tenant_permit = tenants_.TryAdmit(tenant);
  if (!tenant_permit.has_value()) {
    Bump(counters_.rejected_tenant_share);
    Bump(tenant_counters.rejected);
    return absl::ResourceExhaustedError(absl::StrCat(
        "tenant \"", request.tenant, "\" has its share of concurrent reads (",
        tenants_.capacity(), ": tenant_share=", config_.tenant_share,
        " of max_requests=", limits_.requests().capacity(), ")"));
  }
  const absl::Time now = clock_.Now();
  const absl::Time timeout_deadline = now + upstream->timeout();
  const absl::Time deadline = std::min(request.deadline, timeout_deadline);
  const DeadlineSource deadline_source = request.deadline < timeout_deadline
                                             ? DeadlineSource::kCaller
                                             : DeadlineSource::kSidecarTimeout;
  ReadOptions options;
  options.hedge_disabled = request.hedge_disabled;
  options.hedge_delay = upstream->delay().DelayFor(request.hedge_delay);
  // An attempt that had half the sidecar's timeout and did not answer
  // has failed; a younger one (a late fallback or hedge) had no chance.
  options.timeout_blame_age = upstream->timeout() / 2;

  // Counted before the loop can see the read: it may finish at once, and
  // its own admission's credit may pay for its hedge.
  upstream->budget().OnAdmission();
  upstream->retry_budget().OnAdmission(now);
  if (TenantCredits* credits = upstream->tenant_credits()) {
    credits->OnAdmission(tenant, now);
  }
  Bump(counters_.requests);
  Bump(tenant_counters.requests);
  Bump(upstream->totals().requests);
  Bump(counters_.in_flight_requests, int64_t{1});

  const uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
  UpstreamCounters& totals = upstream->totals();
  auto read = std::make_unique<Read>(
      id, std::move(upstream), std::move(request), std::move(done),
      std::move(*permit), std::move(*upstream_permit), tenant,
      std::move(*tenant_permit), limits_, now, deadline, deadline_source,
      options);
  switch (inbox_.PushRead(read)) {
    case ReadInbox::PushResult::kClosed:
      // The loop has stopped: refused after all (`read` frees its permit;
      // the credit it earned no longer matters).
      counters_.requests.fetch_sub(1, std::memory_order_relaxed);
      totals.requests.fetch_sub(1, std::memory_order_relaxed);
      tenant_counters.requests.fetch_sub(1, std::memory_order_relaxed);
      Bump(counters_.in_flight_requests, int64_t{-1});
      return absl::UnavailableError(kShuttingDown);
    case ReadInbox::PushResult::kQueuedWakeUp:
      loop_.Wakeup();
      break;
    case ReadInbox::PushResult::kQueued:
      break;
  }
  return id;
}

void EngineImpl::Cancel(uint64_t read_id) {
  if (inbox_.PushCancel(read_id) == ReadInbox::PushResult::kQueuedWakeUp) {
    loop_.Wakeup();
  }
}

void EngineImpl::OnWakeup() {
  loop_thread_.AssertOnOwner();
  ReadInbox::Batch batch = inbox_.Take();
  // Every loop iteration comes here: most find the inbox empty.
  if (batch.reads.empty() && batch.cancelled.empty()) return;
  const absl::Time now = clock_.Now();
  for (std::unique_ptr<Read>& read : batch.reads) Start(std::move(read), now);
  for (uint64_t id : batch.cancelled) {
    auto it = reads_.find(id);
    if (it != reads_.end()) {
      Execute(*it->second, it->second->decision.OnCancel(now));
    }
  }
}

void EngineImpl::Start(std::unique_ptr<Read> owned, absl::Time now) {
  Read& read = *owned;
  reads_.emplace(read.id, std::move(owned));
  loop_.ArmTimer(read.deadline, TimerKey(read.id, TimerKind::kDeadline));
  // From admission, like the deadline: the hedge delay counts the time
  // the read waited for this loop thread to wake up.
  Execute(read, read.decision.Start(read.admitted));
}

void EngineImpl::OnTimer(uint64_t key) {
  loop_thread_.AssertOnOwner();
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
  loop_thread_.AssertOnOwner();
  void* owner = nullptr;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, &owner);
  auto* slot = static_cast<AttemptSlot*>(owner);
  Detach(slot);
  Read& read = *slot->read;
  const AttemptOutcome outcome = slot->http.Classify(result);
  const absl::Time now = clock_.Now();
  ReplicaCounters& replica = read.counters(slot->index);
  replica.attempt_duration.Record(now - slot->started);
  if (outcome != AttemptOutcome::kSuccess) {
    CountFailure(read.upstream, read.replica(slot->index));
    read.upstream.warm().ForgetPeerOf(easy);
  }
  if (slot->index == 0) {
    read.upstream.delay().ObservePrimary(
        now, now - slot->started,
        outcome == AttemptOutcome::kSuccess
            ? HedgeDelayPolicy::PrimaryEnd::kAnswered
            : HedgeDelayPolicy::PrimaryEnd::kCensored);
  }
  Uncount(replica);
  // The slot keeps the response until Finish takes it or the read ends.
  Execute(read, read.decision.OnAttemptDone(slot->index, outcome, now));
}

absl::Time EngineImpl::BeforeWait() {
  loop_thread_.AssertOnOwner();
  absl::Time next = absl::InfiniteFuture();
  // The current generation's pools; a vanished upstream's go with the
  // last read that holds it.
  std::shared_ptr<const UpstreamSet> set = upstreams_.Current();
  if (set != warmed_set_) {
    // A new generation: the addresses of resolved names join warm.
    for (const auto& upstream : set->all()) {
      for (size_t i = 0; i < upstream->size(); ++i) {
        const hygiene::ReplicaUrl& replica = upstream->replica(i);
        if (!replica.address.empty()) {
          upstream->warm().Expect(replica.address, replica.port);
        }
      }
    }
    warmed_set_ = set;
  }
  for (const auto& upstream : set->all()) {
    next = std::min(next, upstream->warm().Refill());
  }
  return next;
}

void EngineImpl::OnStop() {
  loop_thread_.AssertOnOwner();
  stopping_ = true;
  // Reads queued since the last wake-up never started: no later one can
  // join them, and they are told here, on the loop thread, like every read.
  ReadInbox::Batch queued = inbox_.Close();
  for (std::unique_ptr<Read>& read : queued.reads) CompleteUnstarted(*read);
  const absl::Time now = clock_.Now();
  std::vector<uint64_t> ids;
  ids.reserve(reads_.size());
  for (const auto& [id, read] : reads_) ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = reads_.find(id);
    if (it != reads_.end()) {
      Execute(*it->second, it->second->decision.OnCancel(now));
    }
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
        CancelAttempt(read, action);
        break;
      case Action::Type::kExtraSkipped:
        counters_.CountSkip(action.skip);
        break;
      case Action::Type::kFinish:
        Finish(read, action);
        return;  // `read` is gone
    }
  }
  if (failed_launch >= 0) {
    // Could not even start the transfer: the replica failed, as far as the
    // read is concerned.
    Execute(read,
            read.decision.OnAttemptDone(
                failed_launch, AttemptOutcome::kTransportError, clock_.Now()));
  }
}

bool EngineImpl::Launch(Read& read, const Action& action) {
  Upstream& upstream = read.upstream;
  AttemptSlot* slot = slots_.Take(read, action.attempt, clock_.Now());
  read.slots[action.attempt] = slot;

  AttemptRequest request;
  const hygiene::ReplicaUrl& replica_url = upstream.replica(action.replica);
  request.url = hygiene::BuildAttemptUrl(replica_url, read.request.target);
  if (!replica_url.address.empty()) {
    request.connect_to =
        absl::StrCat(replica_url.host, ":", replica_url.port, ":",
                     replica_url.address, ":", replica_url.port);
  }
  request.head = read.request.head;
  request.headers = &read.request.headers;
  request.http_version = upstream.config().http_version;
  request.ca_file = &upstream.config().ca_file;
  request.warm = &upstream.warm();

  ReplicaCounters& replica = upstream.counters(action.replica);
  replica.CountAttempt(action.kind);
  counters_.CountLaunch(action.kind);
  if (action.kind != AttemptKind::kPrimary) {
    Bump(upstream.totals().hedges);
    Bump(tenant_counters_[read.tenant].hedges);
  }
  if (action.kind == AttemptKind::kHedge) Bump(upstream.totals().timer_hedges);
  if (!slot->http.Prepare(request, upstream.attempt_limits(), slot).ok() ||
      !loop_.AddTransfer(slot->http.handle()).ok()) {
    CountFailure(upstream, action.replica);
    slots_.Release(std::exchange(read.slots[action.attempt], nullptr));
    return false;
  }
  slot->in_multi = true;
  Bump(replica.in_flight, int64_t{1});
  Bump(counters_.in_flight_attempts, int64_t{1});
  return true;
}

void EngineImpl::CancelAttempt(Read& read, const Action& action) {
  // Always followed by the read's kFinish, which detaches the handle.
  AttemptSlot* slot = read.slots[action.attempt];
  if (action.timed_out) {
    CountFailure(read.upstream, read.replica(action.attempt));
    if (slot != nullptr) read.upstream.warm().ForgetPeerOf(slot->http.handle());
  }
  if (slot == nullptr) return;
  Uncount(read.counters(action.attempt));
  if (action.attempt == 0) {
    // Cut short: an answer would have taken longer than this.
    const absl::Time now = clock_.Now();
    read.upstream.delay().ObservePrimary(
        now, now - slot->started, HedgeDelayPolicy::PrimaryEnd::kCensored);
  }
}

void EngineImpl::Finish(Read& read, const Action& action) {
  const absl::Time now = clock_.Now();
  absl::StatusOr<EngineResponse> result;
  if (action.attempt >= 0) {
    EngineResponse response = TakeResponse(read, action.attempt, now);
    if (response.trace.hedge_won) {
      Bump(counters_.hedge_wins);
      Bump(read.upstream.totals().hedge_wins);
      Bump(tenant_counters_[read.tenant].hedge_wins);
      if (read.decision.kind(action.attempt) == AttemptKind::kHedge) {
        CountTimerHedgeWin(read, now);
      }
    }
    result = std::move(response);
  } else {
    counters_.CountReadError(action.error);
    result = ReadErrorStatus(
        action.error,
        ErrorContext{limits_.attempts().capacity(),
                     read.upstream.attempt_limits().max_body_bytes,
                     read.upstream.timeout(), read.deadline_source,
                     stopping_});
  }
  counters_.request_duration.Record(now - read.admitted);
  Bump(counters_.in_flight_requests, int64_t{-1});

  // Its timers would only wake the loop for nothing.
  loop_.CancelTimer(TimerKey(read.id, TimerKind::kHedge));
  loop_.CancelTimer(TimerKey(read.id, TimerKind::kDeadline));
  std::unique_ptr<Read> owned = std::move(reads_.extract(read.id).mapped());
  // Free the max_requests slot before the caller hears back, so a caller that
  // reads sequentially is never refused by its own previous read.
  owned->tenant_permit.Release();
  owned->permit.Release();
  owned->upstream_permit.Release();
  ReadCallback done = std::move(owned->done);
  done(std::move(result));
  // Only now close the losers still transferring (already uncounted by
  // Cancel): the answer does not wait for their connections' teardown.
  UpstreamCounters& totals = owned->upstream.totals();
  for (AttemptSlot*& slot : owned->slots) {
    if (slot == nullptr) continue;
    const bool loser = action.attempt >= 0 && slot->in_multi;
    if (loser) {
      Bump(totals.loser_bytes,
           static_cast<uint64_t>(slot->http.bytes_received()));
    }
    Detach(slot);
    if (loser) {
      Bump(totals.losers_released);
      Bump(totals.loser_release_nanos,
           absl::ToInt64Nanoseconds(clock_.Now() - now));
    }
    slots_.Release(std::exchange(slot, nullptr));
  }
}

void EngineImpl::CountTimerHedgeWin(Read& read, absl::Time now) {
  UpstreamCounters& totals = read.upstream.totals();
  Bump(totals.timer_hedge_wins);
  // The primary, cancelled, had run this long (its slot is released only
  // after this).
  const AttemptSlot* primary = read.slots[0];
  const absl::Time started =
      primary != nullptr ? primary->started : read.admitted;
  const std::optional<absl::Duration> saved =
      read.upstream.delay().MedianRemaining(now - started);
  if (saved.has_value()) totals.latency_saved.Record(*saved);
}

void EngineImpl::CountFailure(Upstream& upstream, size_t replica) {
  Bump(upstream.counters(replica).failures);
  Bump(counters_.backend_failures);
}

void EngineImpl::Uncount(ReplicaCounters& replica) {
  Bump(replica.in_flight, int64_t{-1});
  Bump(counters_.in_flight_attempts, int64_t{-1});
}

void EngineImpl::Detach(AttemptSlot* slot) {
  if (!slot->in_multi) return;
  slot->in_multi = false;
  // Removing an unfinished transfer closes its connection, so the replica
  // sees the loser go away.
  loop_.RemoveTransfer(slot->http.handle());
}

void EngineImpl::CompleteUnstarted(Read& read) {
  Bump(counters_.in_flight_requests, int64_t{-1});
  read.tenant_permit.Release();
  read.permit.Release();
  read.upstream_permit.Release();
  read.done(absl::UnavailableError(kShuttingDown));
}

EngineSnapshot EngineImpl::Snapshot() const {
  EngineSnapshot s;
  counters_.CopyTo(s);
  s.loop_iterations = loop_.iterations();
  s.timers_fired = loop_.timers_fired();
  s.timers_pending = loop_.pending_timers();
  s.timer_lateness_total = loop_.total_timer_lateness();
  s.timer_spin_total = loop_.total_timer_spin();
  upstreams_.AddTo(s);
  const std::vector<std::string> names = tenants_.Names();
  for (size_t slot = 0; slot < names.size(); ++slot) {
    const TenantCounters& counters = tenant_counters_[slot];
    TenantSnapshot& tenant = s.tenants.emplace_back();
    tenant.name = names[slot];
    tenant.requests = counters.requests.load(std::memory_order_relaxed);
    tenant.rejected = counters.rejected.load(std::memory_order_relaxed);
    tenant.hedges = counters.hedges.load(std::memory_order_relaxed);
    tenant.hedge_wins = counters.hedge_wins.load(std::memory_order_relaxed);
    tenant.in_flight = tenants_.in_flight(static_cast<int>(slot));
  }
  return s;
}

absl::Status EngineImpl::SetUpstreams(std::vector<UpstreamConfig> upstreams) {
  EngineConfig checked = config_;
  checked.upstreams = std::move(upstreams);
  if (absl::Status s = ValidateUpstreams(checked.upstreams, checked); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckCurlSupports(checked); !s.ok()) return s;
  upstreams_.Replace(checked.upstreams);
  return absl::OkStatus();
}

}  // namespace

}  // namespace tailgate::hedge::transport

namespace tailgate::hedge {

absl::Status Engine::CheckConfig(const EngineConfig& config) {
  if (absl::Status s = ValidateEngineConfig(config); !s.ok()) return s;
  return transport::CheckCurlSupports(config);
}

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(
    EngineConfig config, Clock& clock, EngineObserver* observer,
    discovery::Resolver* resolver) {
  if (absl::Status s = CheckConfig(config); !s.ok()) return s;
  transport::InitCurlOnce();
  auto engine = std::make_unique<transport::EngineImpl>(
      std::move(config), clock, observer, resolver);
  if (absl::Status s = engine->Start(); !s.ok()) return s;
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace tailgate::hedge
