// EngineImpl: the executor of ReadDecision's actions on the CurlLoop it
// is lent (attached as the loop's callbacks from Start to the destructor).
//
// Submit (any thread) admits a read and queues it in the ReadInbox; the loop
// thread starts it, and from then on every event — a transfer done, a timer,
// a cancellation — goes to the read's ReadDecision, whose actions Execute
// carries out: launch an attempt, arm the hedge timer, cancel an attempt,
// count a skipped extra attempt, finish the read.
//
// engine.cc holds what callers reach (Submit, Cancel, Snapshot,
// SetUpstreams, Create); engine_loop.cc what runs on the loop thread (the
// CurlLoop callbacks and the executors). Internal to the engine: callers
// use engine.h.

#ifndef TAILGATE_HEDGE_TRANSPORT_ENGINE_IMPL_H_
#define TAILGATE_HEDGE_TRANSPORT_ENGINE_IMPL_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hedge/config/engine_config.h"
#include "hedge/decision/read_decision.h"
#include "hedge/discovery/resolver.h"
#include "hedge/policy/admission_limits.h"
#include "hedge/sync/thread_checker.h"
#include "hedge/tenants/tenant_table.h"
#include "hedge/transport/attempt_slots.h"
#include "hedge/transport/curl/curl_loop.h"
#include "hedge/transport/engine.h"
#include "hedge/transport/engine_counters.h"
#include "hedge/transport/read_inbox.h"
#include "hedge/transport/read_state.h"
#include "hedge/transport/upstream.h"
#include "hedge/transport/upstream_directory.h"

namespace tailgate::hedge::transport {

// A timer's key: the read's (or probe's) id and what the timer is for.
enum class TimerKind : uint64_t {
  kHedge = 0,
  kDeadline = 1,
  kGiveUp = 2,      // the read's give-up point
  kProbe = 3,       // a probe's give-up point (the id is the probe's)
  kBackOffEnd = 4,  // a replica's back-off end (the id is its watch's)
};

inline uint64_t TimerKey(uint64_t id, TimerKind kind) {
  return (id << 3) | static_cast<uint64_t>(kind);
}
inline uint64_t TimerId(uint64_t key) { return key >> 3; }
inline TimerKind TimerKindOf(uint64_t key) {
  return static_cast<TimerKind>(key & 7);
}

class EngineImpl final : public Engine, private CurlLoop::Callbacks {
 public:
  EngineImpl(EngineConfig config, CurlLoop& loop, EngineObserver* observer,
             discovery::Resolver* resolver)
      : config_(std::move(config)),
        clock_(loop.clock()),
        observer_(observer),
        own_resolver_(resolver == nullptr
                          ? std::make_unique<discovery::SystemResolver>()
                          : nullptr),
        upstreams_(config_, clock_, observer,
                   resolver == nullptr ? *own_resolver_ : *resolver),
        limits_(config_.admission),
        tenants_(config_.admission.max_requests, config_.tenant_share),
        loop_(loop) {}

  // OnStop completes every read, queued ones included, on the loop thread;
  // the loop then calls this engine no more.
  ~EngineImpl() override { loop_.Detach(*this); }

  absl::Status Start() {
    upstreams_.Replace(config_.upstreams);
    upstreams_.StartRefresher();
    return loop_.Attach(
        *this,
        CurlLoop::Options{static_cast<long>(config_.admission.max_attempts),
                          config_.timer_spin});
  }

  absl::StatusOr<uint64_t> Submit(EngineRead request,
                                  ReadCallback done) override;
  void Cancel(uint64_t read_id) override;
  absl::Status SetUpstreams(std::vector<UpstreamConfig> upstreams) override;
  EngineSnapshot Snapshot() const override;
  Clock& clock() const override { return clock_; }
  void ReleaseIdleMemory() override;

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
  // `neutral`: the caller ended the read, so how long the attempt had
  // run says nothing of its replica.
  void CancelAttempt(Read& read, const Action& action, bool neutral)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void Finish(Read& read, const Action& action)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // The read's timer hedge answered it: the hedge accounting.
  void CountTimerHedgeWin(Read& read, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // When the armed hedge timer is due counted from the primary's transfer
  // beginning (from its launch while curl has not begun it) rather than
  // from admission; nullopt when the primary is done or began within an
  // eighth of the wait after admission.
  static std::optional<absl::Time> HedgeDue(const Read& read);

  void Start(std::unique_ptr<Read> read, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);

  // Coalescing (engine_coalesce.cc). `caller`, a read of a coalescing
  // upstream, joins the shared fetch in flight for its key, or starts one.
  void StartCaller(std::unique_ptr<Read> caller, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // `caller` leaves its fetch before the answer, told `error` (its own
  // deadline passed, or it was cancelled); the fetch is cancelled when no
  // caller is left waiting.
  void LeaveFetch(Read& caller, ReadError error, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // `fetch` (already out of reads_) ended with `result` (`error` when it
  // failed): every caller still waiting gets its own copy.
  void DeliverFetch(Read& fetch, absl::StatusOr<EngineResponse> result,
                    std::optional<ReadError> error, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Ends `caller` (its permits, its deadline timer, its counters) and
  // tells it `result`.
  void CompleteCaller(Read& caller, absl::StatusOr<EngineResponse> result,
                      std::optional<ReadError> error, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);

  // Probes (engine_probes.cc). `mirror`: the read to copy when the
  // upstream has no probe_path (null: send only a synthetic probe).
  void MaybeProbe(const std::shared_ptr<Upstream>& upstream,
                  const EngineRead* mirror, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Synthetic probes that are due; returns when the next one will be.
  absl::Time ProbeDueUpstreams(const UpstreamSet& set, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void OnProbeDone(AttemptSlot* slot, CURLcode result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void OnProbeGiveUp(uint64_t probe_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Ends `probe`: reports `outcome` (nullopt: cancelled, neutral) and frees
  // it.
  void EndProbe(Probe& probe, std::optional<AttemptOutcome> outcome,
                absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void CountFailure(Upstream& upstream, size_t replica);
  // A failed attempt's overload answer (429, 503): counted, and its
  // Retry-After backs the replica off (ReplicaPicker, Back-off).
  void OnOverloadAnswer(Read& read, AttemptSlot& slot, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // A back-off watch's timer: the end reported, or the timer re-armed for
  // an extended back-off.
  void OnBackOffEnd(uint64_t watch_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void Uncount(ReplicaCounters& replica);
  void Detach(AttemptSlot* slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void CompleteUnstarted(Read& read)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);

  // Constant after construction (config_.upstreams: the sets at start).
  const EngineConfig config_;
  Clock& clock_;
  EngineObserver* const observer_;                           // may be null
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
  absl::flat_hash_map<uint64_t, std::unique_ptr<Probe>> probes_
      ABSL_GUARDED_BY(loop_thread_);
  // Replicas backed off now, each watched by a timer at its back-off's
  // end so that the observer hears it end; by watch id, and by the
  // upstream generation and replica index.
  struct BackOffWatch {
    std::weak_ptr<Upstream> upstream;
    std::string upstream_name;
    std::string replica_label;
    size_t replica = 0;
    absl::Time began;
  };
  absl::flat_hash_map<uint64_t, BackOffWatch> back_off_watches_
      ABSL_GUARDED_BY(loop_thread_);
  absl::flat_hash_map<std::pair<const Upstream*, size_t>, uint64_t>
      back_off_watch_of_ ABSL_GUARDED_BY(loop_thread_);
  uint64_t next_back_off_watch_ ABSL_GUARDED_BY(loop_thread_) = 1;
  // Coalescing: the callers waiting on a shared fetch (the fetches
  // themselves are in reads_), and each fetch that may still be joined,
  // by its upstream generation and CoalesceKey.
  absl::flat_hash_map<uint64_t, std::unique_ptr<Read>> callers_
      ABSL_GUARDED_BY(loop_thread_);
  absl::flat_hash_map<std::pair<const Upstream*, std::string>, Read*> fetches_
      ABSL_GUARDED_BY(loop_thread_);
  AttemptSlotPool slots_ ABSL_GUARDED_BY(loop_thread_);
  std::atomic<uint64_t> attempt_slots_{0};  // slots_.size(), for Snapshot
  // The generation whose resolved addresses were last warmed (Expect).
  std::shared_ptr<const UpstreamSet> warmed_set_ ABSL_GUARDED_BY(loop_thread_);
  bool stopping_ ABSL_GUARDED_BY(loop_thread_) = false;

  CurlLoop& loop_;  // lent by the process; outlives the engine
};

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_ENGINE_IMPL_H_
