// Engine's request coalescing (UpstreamConfig::coalesce), on the loop
// thread: the reads of a coalescing upstream are callers of shared
// fetches (read_state.h, engine_impl.h).
//
// A caller is admitted like any read (max_requests, the upstream's own
// cap, its tenant's share: Submit); on the loop thread it joins the fetch
// in flight for its CoalesceKey on the same upstream generation, or
// starts one. A fetch is a Read of the engine's own that runs the hedge
// decision with its first caller's options and tenant, and a deadline of
// the upstream's timeout from that caller's admission (the sidecar's
// timeout: its expiry blames the replicas, as for any read). Each fetch,
// not each caller, earns the upstream's hedge and retry credit, so the
// budget bounds extra attempts per upstream fetch.
//
// Each caller keeps its own deadline (a timer of its own when it is
// earlier than the fetch's: it then ends alone with DEADLINE_EXCEEDED)
// and its own cancellation; when the last caller leaves, the fetch ends
// as that caller's read would have alone: cancelled, or past the caller's
// deadline (both neutral for the breakers). When the fetch ends, every
// caller still waiting gets a copy of its answer (its own trace latency)
// or of its error.

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hedge/transport/coalesce_key.h"
#include "hedge/transport/engine_counters.h"
#include "hedge/transport/engine_impl.h"
#include "hedge/transport/read_result.h"
#include "hedge/transport/read_state.h"
#include "hedge/transport/upstream.h"

namespace tailgate::hedge::transport {

void EngineImpl::StartCaller(std::unique_ptr<Read> owned, absl::Time now) {
  Read& caller = *owned;
  callers_.emplace(caller.id, std::move(owned));
  Upstream& upstream = caller.upstream;
  std::pair<const Upstream*, std::string> key(&upstream,
                                              CoalesceKey(caller.request));
  Read* fetch = nullptr;
  std::unique_ptr<Read> started;
  if (auto it = fetches_.find(key); it != fetches_.end()) {
    fetch = it->second;
    Bump(upstream.totals().coalesced_reads);
  } else {
    started = std::make_unique<Read>(
        next_id_.fetch_add(1, std::memory_order_relaxed), caller.held_upstream,
        caller.request, ReadCallback(), Permit(), Permit(), caller.tenant,
        Permit(), limits_, caller.admitted,
        caller.admitted + upstream.timeout(), DeadlineSource::kSidecarTimeout,
        caller.options);
    started->shared_fetch = true;
    started->fetch_key = key.second;
    fetch = started.get();
    // The fetch's admission: its credit may pay for its own hedge.
    upstream.budget().OnAdmission();
    upstream.retry_budget().OnAdmission(now);
    if (TenantCredits* credits = upstream.tenant_credits()) {
      credits->OnAdmission(caller.tenant, now);
    }
    fetches_.emplace(std::move(key), fetch);
  }
  fetch->callers.push_back(&caller);
  caller.fetch = fetch;
  if (caller.deadline < fetch->deadline) {
    loop_.ArmTimer(caller.deadline, TimerKey(caller.id, TimerKind::kDeadline));
  }
  if (started != nullptr) {
    // Attached first: the fetch may finish within its first actions.
    Read& read = *started;
    reads_.emplace(read.id, std::move(started));
    loop_.ArmTimer(read.deadline, TimerKey(read.id, TimerKind::kDeadline));
    MaybeProbe(read.held_upstream, &read.request, now);
    Execute(read, read.decision.Start(read.admitted));
  }
}

void EngineImpl::LeaveFetch(Read& caller, ReadError error, absl::Time now) {
  Read& fetch = *caller.fetch;
  std::vector<Read*>& waiting = fetch.callers;
  waiting.erase(std::find(waiting.begin(), waiting.end(), &caller));
  if (waiting.empty()) {
    // Nobody is left to answer: the fetch goes (no caller may join it
    // now), before the caller hears back, so that the counters it may
    // read then are settled. Its Finish finds no caller to tell.
    auto it = fetches_.find(std::make_pair(&fetch.upstream, fetch.fetch_key));
    if (it != fetches_.end() && it->second == &fetch) fetches_.erase(it);
    // As the read would have ended alone: on its deadline (neutral for
    // the replicas when it was the caller's), or cancelled.
    Execute(fetch, error == ReadError::kDeadlineExceeded
                       ? fetch.decision.OnDeadline(now, caller.deadline_source)
                       : fetch.decision.OnCancel(now));
  }
  CompleteCaller(
      caller,
      ReadErrorStatus(
          error, ErrorContext{limits_.attempts().capacity(),
                              caller.upstream.attempt_limits().max_body_bytes,
                              caller.upstream.timeout(), caller.deadline_source,
                              stopping_}),
      error, now);
}

void EngineImpl::DeliverFetch(Read& fetch,
                              absl::StatusOr<EngineResponse> result,
                              std::optional<ReadError> error, absl::Time now) {
  auto it = fetches_.find(std::make_pair(&fetch.upstream, fetch.fetch_key));
  if (it != fetches_.end() && it->second == &fetch) fetches_.erase(it);
  std::vector<Read*> waiting = std::move(fetch.callers);
  fetch.callers.clear();
  if (waiting.size() > 1) {
    Bump(fetch.upstream.totals().fetches_saved,
         static_cast<uint64_t>(waiting.size() - 1));
  }
  for (size_t i = 0; i < waiting.size(); ++i) {
    Read& caller = *waiting[i];
    absl::StatusOr<EngineResponse> copy =
        i + 1 == waiting.size() ? std::move(result) : result;
    if (copy.ok()) copy->trace.latency = now - caller.admitted;
    CompleteCaller(caller, std::move(copy), error, now);
  }
}

void EngineImpl::CompleteCaller(Read& caller,
                                absl::StatusOr<EngineResponse> result,
                                std::optional<ReadError> error,
                                absl::Time now) {
  if (error.has_value()) counters_.CountReadError(*error);
  counters_.request_duration.Record(now - caller.admitted);
  Bump(counters_.in_flight_requests, int64_t{-1});
  loop_.CancelTimer(TimerKey(caller.id, TimerKind::kDeadline));
  std::unique_ptr<Read> owned = std::move(callers_.extract(caller.id).mapped());
  owned->fetch = nullptr;
  // As for any read: the slots are free before the caller hears back.
  owned->tenant_permit.Release();
  owned->permit.Release();
  owned->upstream_permit.Release();
  ReadCallback done = std::move(owned->done);
  done(std::move(result));
}

}  // namespace tailgate::hedge::transport
