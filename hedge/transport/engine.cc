// Engine's caller side: admission (Submit), Cancel, Snapshot, SetUpstreams
// and Create. The loop thread's side is engine_loop.cc (engine_impl.h).

#include "hedge/transport/engine.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "hedge/config/engine_config.h"
#include "hedge/decision/read_decision.h"
#include "hedge/policy/hedge_delay.h"
#include "hedge/tenants/tenant_table.h"
#include "hedge/transport/curl/curl_support.h"
#include "hedge/transport/engine_counters.h"
#include "hedge/transport/engine_impl.h"
#include "hedge/transport/read_inbox.h"
#include "hedge/transport/read_state.h"
#include "hedge/transport/upstream.h"

namespace tailgate::hedge::transport {
namespace {

// The read's key for ReadDecision's loss rule: its target, hashed; never 0
// (0 is "no key").
uint64_t ReadKey(absl::string_view target) {
  const uint64_t hash = absl::Hash<absl::string_view>()(target);
  return hash == 0 ? 1 : hash;
}

}  // namespace

absl::StatusOr<uint64_t> EngineImpl::Submit(EngineRead request,
                                            ReadCallback done) {
  std::shared_ptr<Upstream> upstream = upstreams_.Find(request.upstream);
  if (upstream == nullptr) {
    return ReadFailureStatus(
        ReadFailure::kUnknownUpstream,
        absl::StrCat("unknown upstream \"", request.upstream, "\""));
  }
  if (upstream->size() == 0) {
    return ReadFailureStatus(
        ReadFailure::kNoAddress,
        absl::StrCat("upstream \"", request.upstream,
                     "\" has no replica: its names resolved to no address"));
  }
  const int tenant = tenants_.SlotOf(request.tenant);
  TenantCounters& tenant_counters = tenant_counters_[tenant];
  std::optional<Permit> permit = limits_.TryAdmitRequest();
  if (!permit.has_value()) {
    Bump(counters_.rejected_overloaded);
    Bump(tenant_counters.rejected);
    return ReadFailureStatus(
        ReadFailure::kOverloaded,
        absl::StrCat("too many concurrent reads (max_requests=",
                     limits_.requests().capacity(), ")"));
  }
  std::optional<Permit> upstream_permit = upstream->TryAdmit();
  if (!upstream_permit.has_value()) {
    Bump(counters_.rejected_overloaded);
    Bump(tenant_counters.rejected);
    return ReadFailureStatus(
        ReadFailure::kOverloaded,
        absl::StrCat("too many concurrent reads of upstream \"",
                     request.upstream,
                     "\" (its max_requests=", upstream->max_requests(), ")"));
  }
  // Taken after the max_requests slots and given back before them (Finish),
  // so a tenant never holds more than the reads in flight: with a share
  // of 1 this never refuses.
  std::optional<Permit> tenant_permit = tenants_.TryAdmit(tenant);
  if (!tenant_permit.has_value()) {
    Bump(counters_.rejected_tenant_share);
    Bump(tenant_counters.rejected);
    return ReadFailureStatus(
        ReadFailure::kOverloaded,
        absl::StrCat("tenant \"", request.tenant,
                     "\" has its share of concurrent reads (",
                     tenants_.capacity(),
                     ": tenant_share=", config_.tenant_share,
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
  // A learned delay keeps the lower half of the hedge credits for reads
  // that are late by far (adaptive_hedge_delay.h).
  options.late_hedge_delay =
      upstream->delay().LateDelayFor(request.hedge_delay);
  options.hedge_reserve = upstream->budget().burst() / 2;
  // An attempt that had half the sidecar's timeout and did not answer
  // has failed; a younger one (a late fallback or hedge) had no chance.
  options.timeout_blame_age = upstream->timeout() / 2;
  options.give_up_after = upstream->GiveUpAfter(now);
  options.key = ReadKey(request.target);

  // Counted before the loop can see the read: it may finish at once, and
  // its own admission's credit may pay for its hedge. A coalescing
  // upstream's credit is earned by each upstream fetch instead, when the
  // loop starts it (StartCaller): a read that joins a fetch neither earns
  // nor spends.
  if (!upstream->config().coalesce) {
    if (request.batch != nullptr) {
      request.batch->OnAdmission(upstream->shared_budget());
    } else {
      upstream->budget().OnAdmission();
    }
    upstream->retry_budget().OnAdmission(now);
    if (TenantCredits* credits = upstream->tenant_credits()) {
      credits->OnAdmission(tenant, now);
    }
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
      return ReadFailureStatus(ReadFailure::kShuttingDown,
                               kShuttingDownMessage);
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

void EngineImpl::ReleaseIdleMemory() {
  // Free slots kept for the next reads: a handful covers a sidecar at rest
  // (about 25 KiB each: the easy handle and its receive buffer).
  constexpr size_t kKeptSlots = 8;
  auto done = std::make_shared<absl::Notification>();
  const bool posted = loop_.Post([this, done](event_base*) {
    loop_thread_.AssertOnOwner();
    slots_.Shrink(kKeptSlots);
    attempt_slots_.store(slots_.size(), std::memory_order_relaxed);
    done->Notify();
  });
  if (posted) done->WaitForNotificationWithTimeout(absl::Seconds(1));
}

EngineSnapshot EngineImpl::Snapshot() const {
  EngineSnapshot s;
  counters_.CopyTo(s);
  s.loop_iterations = loop_.iterations();
  s.timers_fired = loop_.timers_fired();
  s.timers_pending = loop_.pending_timers();
  s.attempt_slots = attempt_slots_.load(std::memory_order_relaxed);
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

}  // namespace tailgate::hedge::transport

namespace tailgate::hedge {

absl::Status Engine::CheckConfig(const EngineConfig& config) {
  if (absl::Status s = ValidateEngineConfig(config); !s.ok()) return s;
  return transport::CheckCurlSupports(config);
}

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(
    EngineConfig config, transport::CurlLoop& loop, EngineObserver* observer,
    discovery::Resolver* resolver) {
  if (absl::Status s = CheckConfig(config); !s.ok()) return s;
  transport::InitCurlOnce();
  auto engine = std::make_unique<transport::EngineImpl>(std::move(config), loop,
                                                        observer, resolver);
  if (absl::Status s = engine->Start(); !s.ok()) return s;
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace tailgate::hedge
