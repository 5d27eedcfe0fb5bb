// Engine's loop-thread side: the CurlLoop callbacks and the executors of
// each read's actions (engine_impl.h).

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "hedge/decision/read_decision.h"
#include "hedge/health/retry_after.h"
#include "hedge/hygiene/replica_url.h"
#include "hedge/transport/attempt_slots.h"
#include "hedge/transport/curl/curl_loop.h"
#include "hedge/transport/curl/curl_support.h"
#include "hedge/transport/curl/http_attempt.h"
#include "hedge/transport/engine_counters.h"
#include "hedge/transport/engine_impl.h"
#include "hedge/transport/read_inbox.h"
#include "hedge/transport/read_result.h"
#include "hedge/transport/read_state.h"
#include "hedge/transport/upstream.h"
#include "hedge/transport/upstream_directory.h"

namespace tailgate::hedge::transport {

void EngineImpl::OnWakeup() {
  loop_thread_.AssertOnOwner();
  ReadInbox::Batch batch = inbox_.Take();
  // Every loop iteration comes here: most find the inbox empty.
  if (batch.reads.empty() && batch.cancelled.empty()) return;
  const absl::Time now = clock_.Now();
  for (std::unique_ptr<Read>& read : batch.reads) Start(std::move(read), now);
  for (uint64_t id : batch.cancelled) {
    auto it = reads_.find(id);
    // A shared fetch's id is the engine's own: only its callers cancel.
    if (it != reads_.end() && !it->second->shared_fetch) {
      Execute(*it->second, it->second->decision.OnCancel(now));
    } else if (auto caller = callers_.find(id); caller != callers_.end()) {
      LeaveFetch(*caller->second, ReadError::kCancelled, now);
    }
  }
}

void EngineImpl::Start(std::unique_ptr<Read> owned, absl::Time now) {
  if (owned->upstream.config().coalesce) {
    StartCaller(std::move(owned), now);
    return;
  }
  Read& read = *owned;
  reads_.emplace(read.id, std::move(owned));
  loop_.ArmTimer(read.deadline, TimerKey(read.id, TimerKind::kDeadline));
  // A replica whose ejection is over gets its probe beside this read's
  // own attempt (a copy of it, unless the upstream has a probe path).
  MaybeProbe(read.held_upstream, &read.request, now);
  // The decision counts from admission, like the deadline; the hedge
  // timer is then moved to count from the primary's beginning (OnTimer).
  Execute(read, read.decision.Start(read.admitted));
}

void EngineImpl::OnTimer(uint64_t key) {
  loop_thread_.AssertOnOwner();
  const TimerKind kind = TimerKindOf(key);
  if (kind == TimerKind::kProbe) {
    OnProbeGiveUp(TimerId(key));
    return;
  }
  if (kind == TimerKind::kBackOffEnd) {
    OnBackOffEnd(TimerId(key));
    return;
  }
  auto it = reads_.find(TimerId(key));
  if (it == reads_.end()) {
    // A coalesced caller's own deadline, or a read finished before its
    // timer.
    auto caller = callers_.find(TimerId(key));
    if (caller != callers_.end() && kind == TimerKind::kDeadline) {
      LeaveFetch(*caller->second, ReadError::kDeadlineExceeded, clock_.Now());
    }
    return;
  }
  Read& read = *it->second;
  const absl::Time now = clock_.Now();
  if (kind == TimerKind::kDeadline) {
    Execute(read, read.decision.OnDeadline(now, read.deadline_source));
  } else if (kind == TimerKind::kGiveUp) {
    Execute(read, read.decision.OnGiveUp(now));
  } else {
    // The decision counts from admission; the time the primary waited
    // inside the sidecar before curl began it (a loop busy starting a
    // batch's other transfers) is not the replica's: the hedge waits it
    // out too, so that only a replica that was slow to answer is hedged.
    if (const std::optional<absl::Time> due = HedgeDue(read); due > now) {
      loop_.ArmTimer(*due, key);
      Bump(read.upstream.totals().queued_hedge_waits);
      return;
    }
    const Actions actions = read.decision.OnHedgeTimer(now);
    for (const Action& action : actions) {
      // Armed again: the hedge waits for the late delay.
      if (action.type == Action::Type::kArmHedgeTimer) {
        Bump(read.upstream.totals().late_hedge_waits);
      }
    }
    Execute(read, actions);
  }
}

void EngineImpl::OnTransferDone(CURL* easy, CURLcode result) {
  loop_thread_.AssertOnOwner();
  void* owner = nullptr;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, &owner);
  auto* slot = static_cast<AttemptSlot*>(owner);
  if (slot->probe != nullptr) {
    OnProbeDone(slot, result);
    return;
  }
  Detach(slot);
  Read& read = *slot->read;
  const AttemptOutcome outcome = slot->http.Classify(result);
  const absl::Time now = clock_.Now();
  ReplicaCounters& replica = read.counters(slot->index);
  replica.attempt_duration.Record(now - slot->started);
  ReplicaLoad& load = read.upstream.load(read.replica(slot->index));
  if (outcome == AttemptOutcome::kSuccess) {
    load.End(slot->started, now, ReplicaLoad::Ending::kAnswered);
    read.upstream.give_up().ObserveAnswer(now, now - slot->started);
  } else {
    load.End(slot->started, now, ReplicaLoad::Ending::kFailed);
    CountFailure(read.upstream, read.replica(slot->index));
    read.upstream.warm().ForgetPeerOf(easy);
    if (outcome == AttemptOutcome::kServerError &&
        IsOverloadAnswer(slot->http.status())) {
      OnOverloadAnswer(read, *slot, now);
    }
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
  return std::min(next, ProbeDueUpstreams(*set, clock_.Now()));
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
  ids.clear();
  for (const auto& [id, probe] : probes_) ids.push_back(id);
  for (uint64_t id : ids) EndProbe(*probes_[id], std::nullopt, now);
  // Back-offs in force end with the engine, unreported.
  for (const auto& [id, watch] : back_off_watches_) {
    loop_.CancelTimer(TimerKey(id, TimerKind::kBackOffEnd));
  }
  back_off_watches_.clear();
  back_off_watch_of_.clear();
}

void EngineImpl::Execute(Read& read, const Actions& actions) {
  int failed_launch = -1;
  // The caller's cancel: the attempts it cuts short say nothing of their
  // replicas' speed.
  const bool caller_cancel =
      std::any_of(actions.begin(), actions.end(), [](const Action& action) {
        return action.type == Action::Type::kFinish && action.attempt < 0 &&
               action.error == ReadError::kCancelled;
      });
  for (const Action& action : actions) {
    switch (action.type) {
      case Action::Type::kLaunch:
        if (!Launch(read, action)) failed_launch = action.attempt;
        break;
      case Action::Type::kArmHedgeTimer:
        read.hedge_wait = action.at - read.admitted;
        loop_.ArmTimer(action.at, TimerKey(read.id, TimerKind::kHedge));
        break;
      case Action::Type::kArmGiveUpTimer:
        loop_.ArmTimer(action.at, TimerKey(read.id, TimerKind::kGiveUp));
        break;
      case Action::Type::kCancel:
        CancelAttempt(read, action, caller_cancel);
        break;
      case Action::Type::kGaveUp:
        Bump(read.counters(action.attempt).give_ups);
        Bump(read.upstream.totals().give_up_fallbacks);
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
  AttemptSlot* slot = slots_.Take(&read, action.attempt, clock_.Now());
  attempt_slots_.store(slots_.size(), std::memory_order_relaxed);
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
  request.clock = &clock_;

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
  upstream.load(action.replica).Begin(slot->started);
  Bump(replica.in_flight, int64_t{1});
  Bump(counters_.in_flight_attempts, int64_t{1});
  return true;
}

void EngineImpl::CancelAttempt(Read& read, const Action& action, bool neutral) {
  // Always followed by the read's kFinish, which detaches the handle.
  AttemptSlot* slot = read.slots[action.attempt];
  if (action.failed) {
    CountFailure(read.upstream, read.replica(action.attempt));
    if (slot != nullptr) read.upstream.warm().ForgetPeerOf(slot->http.handle());
  }
  if (slot == nullptr) return;
  Uncount(read.counters(action.attempt));
  const absl::Time now = clock_.Now();
  read.upstream.load(read.replica(action.attempt))
      .End(slot->started, now,
           neutral ? ReplicaLoad::Ending::kNoSample
                   : ReplicaLoad::Ending::kCutShort);
  if (action.attempt == 0) {
    // Cut short: an answer would have taken longer than this.
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
    // A shared fetch's callers count as reads, each as it ends.
    if (!read.shared_fetch) counters_.CountReadError(action.error);
    result = ReadErrorStatus(
        action.error,
        ErrorContext{limits_.attempts().capacity(),
                     read.upstream.attempt_limits().max_body_bytes,
                     read.upstream.timeout(), read.deadline_source, stopping_});
  }

  // Its timers would only wake the loop for nothing.
  loop_.CancelTimer(TimerKey(read.id, TimerKind::kHedge));
  loop_.CancelTimer(TimerKey(read.id, TimerKind::kDeadline));
  loop_.CancelTimer(TimerKey(read.id, TimerKind::kGiveUp));
  std::unique_ptr<Read> owned = std::move(reads_.extract(read.id).mapped());
  if (owned->shared_fetch) {
    DeliverFetch(*owned, std::move(result),
                 action.attempt >= 0 ? std::nullopt
                                     : std::optional<ReadError>(action.error),
                 now);
  } else {
    counters_.request_duration.Record(now - read.admitted);
    Bump(counters_.in_flight_requests, int64_t{-1});
    // Free the max_requests slot before the caller hears back, so a caller
    // that reads sequentially is never refused by its own previous read.
    owned->tenant_permit.Release();
    owned->permit.Release();
    owned->upstream_permit.Release();
    ReadCallback done = std::move(owned->done);
    done(std::move(result));
  }
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

std::optional<absl::Time> EngineImpl::HedgeDue(const Read& read) {
  const AttemptSlot* primary = read.slots[0];
  if (primary == nullptr) return std::nullopt;
  // Not begun yet (connecting, or not yet handed to curl: a loop that
  // lags behind fires the timer before the transfer starts): from its
  // launch.
  const absl::Time began = primary->http.began().value_or(primary->started);
  // A primary begun within an eighth of the wait (the usual tens of
  // microseconds) keeps the timer: moving it would cost a second wake-up
  // for every hedged read, to gain less than that.
  if (began - read.admitted <= read.hedge_wait / 8) return std::nullopt;
  return began + read.hedge_wait;
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

void EngineImpl::OnOverloadAnswer(Read& read, AttemptSlot& slot,
                                  absl::Time now) {
  const int status = slot.http.status();
  const size_t replica = read.replica(slot.index);
  read.counters(slot.index).CountOverloadAnswer(status);
  // It asked for time: no attempt goes to it until then while another
  // replica serves (ReplicaPicker, back-off). A date is read against the
  // wall clock; the wait counts on the engine's.
  const std::optional<absl::Duration> wait =
      ParseRetryAfter(slot.http.HeaderValue("Retry-After"), absl::Now());
  if (!wait.has_value() || *wait <= absl::ZeroDuration()) return;
  const absl::Time until = now + *wait;
  const absl::Time before = read.upstream.picker().BackOff(replica, until);
  if (before > now) return;  // extended: no change of state
  const std::string label =
      hygiene::ReplicaLabel(read.upstream.replica(replica));
  const std::pair<const Upstream*, size_t> key{&read.upstream, replica};
  auto it = back_off_watch_of_.find(key);
  if (it != back_off_watch_of_.end()) {
    // Its last back-off ended before its watch's timer fired: that end
    // first. The watch goes on for this one (it re-arms when it fires),
    // unless it was a freed generation's at the same address.
    BackOffWatch& watch = back_off_watches_[it->second];
    if (observer_ != nullptr) {
      observer_->OnReplicaBackOff(
          watch.upstream_name, watch.replica_label,
          {false, 0, absl::ZeroDuration(),
           std::max(before, watch.began) - watch.began});
    }
    if (watch.upstream.lock().get() == &read.upstream) {
      watch.began = now;
    } else {
      loop_.CancelTimer(TimerKey(it->second, TimerKind::kBackOffEnd));
      back_off_watches_.erase(it->second);
      back_off_watch_of_.erase(it);
      it = back_off_watch_of_.end();
    }
  }
  if (it == back_off_watch_of_.end()) {
    const uint64_t id = next_back_off_watch_++;
    back_off_watches_.emplace(
        id, BackOffWatch{read.held_upstream, read.upstream.name(), label,
                         replica, now});
    back_off_watch_of_.emplace(key, id);
    loop_.ArmTimer(until, TimerKey(id, TimerKind::kBackOffEnd));
  }
  if (observer_ != nullptr) {
    observer_->OnReplicaBackOff(read.upstream.name(), label,
                                {true, status, *wait, absl::ZeroDuration()});
  }
}

void EngineImpl::OnBackOffEnd(uint64_t watch_id) {
  auto it = back_off_watches_.find(watch_id);
  if (it == back_off_watches_.end()) return;
  BackOffWatch& watch = it->second;
  const absl::Time now = clock_.Now();
  const std::shared_ptr<Upstream> upstream = watch.upstream.lock();
  absl::Time end = now;
  if (upstream != nullptr) {
    end = upstream->picker().BackedOffUntil(watch.replica);
    if (end > now) {
      // Extended by a later Retry-After.
      loop_.ArmTimer(end, TimerKey(watch_id, TimerKind::kBackOffEnd));
      return;
    }
    back_off_watch_of_.erase({upstream.get(), watch.replica});
  } else {
    // A reload replaced its set (whose back-offs went with it).
    absl::erase_if(back_off_watch_of_, [watch_id](const auto& entry) {
      return entry.second == watch_id;
    });
  }
  if (observer_ != nullptr) {
    observer_->OnReplicaBackOff(watch.upstream_name, watch.replica_label,
                                {false, 0, absl::ZeroDuration(),
                                 std::max(end, watch.began) - watch.began});
  }
  back_off_watches_.erase(it);
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
  read.done(
      ReadFailureStatus(ReadFailure::kShuttingDown, kShuttingDownMessage));
}

}  // namespace tailgate::hedge::transport
