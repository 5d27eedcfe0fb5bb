// Engine's probes of ejected replicas, on the loop thread (engine_impl.h).
//
// A replica whose ejection is over wants a probe (CircuitBreaker). With a
// probe_path, the loop sends one as soon as it is due (BeforeWait); without
// one, the next read of the upstream is copied to it, sent beside the
// read's own attempt, which never waits for it. A probe passes when it
// answers completely with status < 500 (and not 429) before the
// upstream's give-up point; anything else, or running past that point,
// fails it. Its answer
// is discarded. A probe takes an attempt permit (max_attempts) like any
// attempt, and none is sent while none is free.

#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hedge/transport/curl/http_attempt.h"
#include "hedge/transport/engine_impl.h"
#include "hedge/transport/read_state.h"
#include "hedge/transport/upstream.h"

namespace tailgate::hedge::transport {

void EngineImpl::MaybeProbe(const std::shared_ptr<Upstream>& held,
                            const EngineRead* mirror, absl::Time now) {
  Upstream& upstream = *held;
  if (upstream.size() == 0 || stopping_) return;
  const bool synthetic = !upstream.config().probe_path.empty();
  if (!synthetic && mirror == nullptr) return;
  ReplicaPicker& picker = upstream.picker();
  if (picker.NextProbeDue(now) > now) return;
  std::optional<Permit> permit = limits_.TryStartAttempt();
  if (!permit.has_value()) return;
  std::optional<ReplicaPick> pick = picker.TakeProbe(now);
  if (!pick.has_value()) return;

  auto owned = std::make_unique<Probe>();
  Probe& probe = *owned;
  probe.id = next_id_.fetch_add(1, std::memory_order_relaxed);
  probe.upstream = held;
  probe.replica = pick->replica;
  probe.ticket = pick->ticket;
  probe.permit = *std::move(permit);
  if (synthetic) {
    probe.target = upstream.config().probe_path;
    probe.head = upstream.config().probe_head;
  } else {
    probe.target = mirror->target;
    probe.head = mirror->head;
    probe.headers = mirror->headers;
  }
  const absl::Duration give_up =
      upstream.GiveUpAfter(now).value_or(upstream.timeout() / 2);
  probe.give_up_at = now + give_up;

  AttemptSlot* slot = slots_.Take(nullptr, -1, now);
  attempt_slots_.store(slots_.size(), std::memory_order_relaxed);
  slot->probe = &probe;
  probe.slot = slot;
  probes_.emplace(probe.id, std::move(owned));

  AttemptRequest request;
  const hygiene::ReplicaUrl& replica_url = upstream.replica(probe.replica);
  request.url = hygiene::BuildAttemptUrl(replica_url, probe.target);
  if (!replica_url.address.empty()) {
    request.connect_to =
        absl::StrCat(replica_url.host, ":", replica_url.port, ":",
                     replica_url.address, ":", replica_url.port);
  }
  request.head = probe.head;
  request.headers = &probe.headers;
  request.http_version = upstream.config().http_version;
  request.ca_file = &upstream.config().ca_file;
  request.warm = &upstream.warm();
  if (!slot->http.Prepare(request, upstream.attempt_limits(), slot).ok() ||
      !loop_.AddTransfer(slot->http.handle()).ok()) {
    EndProbe(probe, AttemptOutcome::kTransportError, now);
    return;
  }
  slot->in_multi = true;
  Bump(counters_.in_flight_attempts, int64_t{1});
  loop_.ArmTimer(probe.give_up_at, TimerKey(probe.id, TimerKind::kProbe));
}

absl::Time EngineImpl::ProbeDueUpstreams(const UpstreamSet& set,
                                         absl::Time now) {
  absl::Time next = absl::InfiniteFuture();
  for (const auto& upstream : set.all()) {
    if (upstream->size() == 0 || upstream->config().probe_path.empty()) {
      continue;
    }
    MaybeProbe(upstream, nullptr, now);
    next = std::min(next, upstream->picker().NextProbeDue(now));
  }
  // One due now has a probe out, or none could be sent (no permit): look
  // again shortly rather than spin.
  return std::max(next, now + absl::Milliseconds(1));
}

void EngineImpl::OnProbeDone(AttemptSlot* slot, CURLcode result) {
  Probe& probe = *slot->probe;
  const absl::Time now = clock_.Now();
  AttemptOutcome outcome = slot->http.Classify(result);
  if (outcome == AttemptOutcome::kSuccess && now >= probe.give_up_at) {
    outcome = AttemptOutcome::kTransportError;  // answered, but too late
  }
  EndProbe(probe, outcome, now);
}

void EngineImpl::OnProbeGiveUp(uint64_t probe_id) {
  auto it = probes_.find(probe_id);
  if (it == probes_.end()) return;
  EndProbe(*it->second, AttemptOutcome::kTransportError, clock_.Now());
}

void EngineImpl::EndProbe(Probe& probe, std::optional<AttemptOutcome> outcome,
                          absl::Time now) {
  Upstream& upstream = *probe.upstream;
  ReplicaPicker& picker = upstream.picker();
  ReplicaCounters& counters = upstream.counters(probe.replica);
  AttemptSlot* slot = probe.slot;
  if (slot != nullptr && slot->in_multi) {
    Bump(counters_.in_flight_attempts, int64_t{-1});
  }
  if (!outcome.has_value()) {
    picker.OnCancel(probe.replica, probe.ticket);
  } else if (*outcome == AttemptOutcome::kSuccess) {
    Bump(counters.probes_passed);
    if (slot != nullptr) {
      // A fresh latency for the replica coming back.
      upstream.load(probe.replica).RestartFrom(now, now - slot->started);
    }
    picker.OnSuccess(probe.replica, probe.ticket, now);
  } else {
    Bump(counters.probes_failed);
    if (slot != nullptr) upstream.warm().ForgetPeerOf(slot->http.handle());
    picker.OnFailure(probe.replica, probe.ticket, now);
  }
  loop_.CancelTimer(TimerKey(probe.id, TimerKind::kProbe));
  if (slot != nullptr) {
    Detach(slot);
    slots_.Release(slot);
  }
  probes_.erase(probe.id);  // frees `probe`
}

}  // namespace tailgate::hedge::transport
