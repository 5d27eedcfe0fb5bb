// ReadDecision: the hedging logic of one read, as a state machine.
//
// The transport feeds it events (start, hedge timer fired, attempt finished,
// deadline, caller cancel) and executes the actions it returns (launch an
// attempt on a replica, arm the hedge timer, cancel an attempt, finish the
// read). It does no I/O and reads no clock.
//
// Rules (the request lifecycle):
//  - Start picks the primary (ReplicaPicker: power of two choices among
//    serving replicas) and takes an attempt permit; no replica -> finish
//    kNoReplica; no permit -> kOverloaded. Unless hedging is disabled for
//    the read, it arms the hedge timer at now + hedge_delay and, with a
//    give_up_after, the give-up timer at the read's give-up point.
//  - The read's give-up point: none when hedging is disabled for the read
//    (the caller asked for no speculative attempt: only a failed primary
//    falls back); otherwise give_up_after, but never earlier than the
//    read's hedge_delay, so that a primary merely late is the hedge's to
//    answer (its budget and payoff gate decide) and never a fallback's.
//    A give-up timer that fires before the hedge timer has asked for the
//    hedge (both due at once, the hedge timer moved later by the
//    transport, or a late hedge awaited) waits for it: the give-up
//    follows the hedge's decision.
//  - Give-up: when the give-up point passes with the primary still the only
//    attempt in flight, the read tries a fallback (kind kFallback, on the
//    retry budget, as below); if one is launched, kGaveUp says so. The
//    primary is no longer waited for, but it is not cut: it races the
//    fallback, and if the fallback wins it lost its race past the give-up
//    point and counts as a failure of its replica (below); if the
//    fallback fails, the primary may still answer the read. If no
//    fallback can be launched (no replica, capacity or retry credit), the
//    primary goes on and the decision stays open. A hedge already in
//    flight is left to race.
//  - At most one extra attempt, on a replica other than the primary's: when
//    the hedge timer fires with no complete response (kind kHedge), or at
//    once when the primary fails before that (kind kFallback). The extra
//    attempt is taken only when, in this order, another replica is eligible
//    (serving, neither backed off by a Retry-After nor degraded:
//    ReplicaPicker; one whose last outcome was an answer first),
//    an attempt permit is free and its budget yields a credit: a timer
//    hedge must pass its tenant's payoff gate (when the read has one:
//    hedges that stopped winning are cut toward a floor), then takes one from
//    the read's tenant's hedge credits and one from the hedge budget
//    (TenantCredits, when the policy has them; the hedge budget alone
//    otherwise); a read of a ReadMany batch takes its batch's credit
//    first, while the batch holds one, and such a hedge neither asks the
//    payoff gate nor reports to it; a fallback takes one from the retry budget
//    only, so hedges can never leave a failed primary without its fallback.
//    An extra launched while the primary still runs (a timer hedge, a
//    give-up fallback) also needs an overlap slot (admission_limits.h),
//    so that hedges never take the attempt permits that new reads'
//    primaries need; without one it is skipped as kNoCapacity.
//    Otherwise the read goes on without it (kExtraSkipped says why).
//    Late hedges: with a late_hedge_delay (longer than hedge_delay), a
//    timer that fires while the hedge budget (with the batch's credit)
//    holds fewer than hedge_reserve credits asks for nothing yet: the timer is
//    armed again for late_hedge_delay after the primary's start, and the hedge
//    is asked for then, as above (once only). A hedge skipped at the timer
//    leaves the decision open: if the primary then fails, the fallback is tried
//    with the budget and capacity of that moment.
//  - The first kSuccess (complete, status < 500 and not 429) wins; any
//    other attempt in flight is cancelled before the read finishes. A
//    loser that had run past give_up_after lost by hanging: it counts as
//    a failure of its replica (kCancel with `failed`), the first time its
//    key does so on that replica within ReplicaPicker::kSlowKeyWindow;
//    later ones are neutral if the replica answered any read since (one
//    slow key is the key's trait, and a client reading it again and again
//    must not eject a replica every other read needs), and count while it
//    answers nothing (ReplicaPicker::OnLostPastGiveUp). A read whose timer
//    hedge was launched tells its tenant's payoff gate whether the hedge
//    won; so does one whose deadline came first (a loss). A caller's
//    cancel, both attempts failing, and a primary that won before the
//    hedge had run half the hedge delay (a read barely late, no evidence
//    either way) tell it nothing.
//  - A kServerError (5xx, or an overload answer: 429, 503) is a failed
//    attempt like a transport error: it falls back as above.
//  - When no attempt is left in flight and none succeeded: the most recent
//    kServerError is forwarded as it is (finish with that attempt: its
//    status, headers such as Retry-After, and body); else kTooLarge if
//    an attempt was over the size limit; else kUpstreamFailure.
//  - Deadline and caller cancel cancel every attempt in flight and finish
//    with kDeadlineExceeded / kCancelled.
//  - Each attempt's outcome goes to its replica's breaker, through the
//    picker (which applies the set's ejection guard rails), with its ticket;
//    a cancelled attempt is neutral, except one still in flight when the
//    sidecar's own timeout runs out after it ran for at least
//    timeout_blame_age: that replica failed to answer in time and it counts
//    as a failure (a hung replica must leave the rotation).
//    A shorter deadline of the caller's is the caller's choice: neutral.
//    Each attempt's permit is released when it ends, whichever way.
//  - After kFinish, every event returns no actions.
//
// Thread safety: not thread-safe; one thread (the engine loop) drives it.
// The collaborators in ReadPolicy must outlive it.

#ifndef TAILGATE_HEDGE_DECISION_READ_DECISION_H_
#define TAILGATE_HEDGE_DECISION_READ_DECISION_H_

#include <array>
#include <cstddef>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "absl/time/time.h"
#include "hedge/health/circuit_breaker.h"
#include "hedge/health/replica_picker.h"
#include "hedge/policy/admission_limits.h"
#include "hedge/policy/batch_credits.h"
#include "hedge/policy/hedge_budget.h"
#include "hedge/policy/retry_budget.h"
#include "hedge/tenants/tenant_credits.h"
#include "hedge/tenants/tenant_payoff.h"

namespace tailgate::hedge {

enum class AttemptKind { kPrimary, kHedge, kFallback };
const char* AttemptKindName(AttemptKind kind);  // "primary", "hedge", ...

// An overload answer: 429 Too Many Requests or 503 Service Unavailable,
// the replica's own word that it cannot serve the request now.
inline bool IsOverloadAnswer(int status) {
  return status == 429 || status == 503;
}

// A complete answer that is a failure of its replica: status >= 500, or
// an overload answer (429 included). Such an answer is quick, not good:
// it neither wins a read nor makes its replica look cheap.
inline bool IsFailureAnswer(int status) {
  return status >= 500 || IsOverloadAnswer(status);
}

// How an attempt ended, as the transport saw it.
enum class AttemptOutcome {
  kSuccess,         // complete response, not a failure answer (below 500,
                    // not 429)
  kServerError,     // complete response that is a failure answer (>= 500,
                    // or 429: IsFailureAnswer)
  kTransportError,  // connect/reset/timeout/malformed response
  kTooLarge,        // body over max_response_bytes (by header or stream)
};

// Why a read ended without an upstream response.
enum class ReadError {
  kOverloaded,  // no attempt permit for the primary
  kNoReplica,   // no eligible replica for the primary
  kDeadlineExceeded,
  kCancelled,
  kTooLarge,
  kUpstreamFailure,  // every attempt failed at the transport level
};
const char* ReadErrorName(ReadError error);

// Why no extra attempt was launched when one was wanted.
enum class SkipReason {
  kNoReplica,
  kNoCapacity,
  kNoBudget,        // a hedge: no hedge credit
  kNoRetryBudget,   // a fallback: no retry credit
  kNoTenantBudget,  // a hedge: the read's tenant has no hedge credit left
};
inline constexpr int kSkipReasons = 5;
const char* SkipReasonName(SkipReason reason);

inline constexpr int kMaxAttempts = 2;

struct Action {
  enum class Type {
    kLaunch,          // start attempt `attempt` on `replica`, of `kind`
    kArmHedgeTimer,   // call OnHedgeTimer at `at`
    kCancel,          // abort attempt `attempt` (its permit is released);
                      // `failed`: it counts as a failure of its replica
                      // (the sidecar's timeout, or a race lost past the
                      // give-up point). Only as the read ends: a kFinish
                      // follows.
    kArmGiveUpTimer,  // call OnGiveUp at `at`
    kGaveUp,          // informational: the primary `attempt` ran past
                      // the give-up point and a fallback was launched
    kExtraSkipped,    // informational: no extra attempt, for `skip`
    kFinish,          // the read is over: see `attempt` / `error`
  };
  Type type;
  int attempt = -1;    // kLaunch, kCancel; kFinish: the attempt whose
                       // response is returned, or -1 with `error`
  size_t replica = 0;  // kLaunch
  AttemptKind kind = AttemptKind::kPrimary;       // kLaunch
  absl::Time at;                                  // kArmHedgeTimer
  SkipReason skip = SkipReason::kNoReplica;       // kExtraSkipped
  ReadError error = ReadError::kUpstreamFailure;  // kFinish, attempt == -1
  bool failed = false;                            // kCancel
};

// Whose deadline ran out (see the rules above).
enum class DeadlineSource {
  kSidecarTimeout,  // the sidecar's --timeout: attempts in flight failed
  kCaller,          // the caller's shorter deadline: neutral
};

using Actions = absl::InlinedVector<Action, 4>;

// The shared policy objects one read consults.
struct ReadPolicy {
  ReplicaPicker* picker;
  HedgeBudget* budget;        // timer hedges
  RetryBudget* retry_budget;  // failure fallbacks
  AdmissionLimits* limits;
  // The tenants' own shares of the hedge credits (null: none to check),
  // and the read's tenant's slot in it.
  TenantCredits* tenant_credits = nullptr;
  int tenant_slot = 0;
  // The payoff gates; the read's is tenant_slot's (null: every timer
  // hedge may ask).
  TenantPayoff* payoff = nullptr;
  // The credit of the read's batch (null: a read of its own): a timer
  // hedge takes from it first, without the payoff gate, before the
  // tenant's and the budget's (hedge/policy/batch_credits.h).
  BatchCredits* batch = nullptr;
};

struct ReadOptions {
  bool hedge_disabled = false;  // no timer hedge; fallback still possible
  absl::Duration hedge_delay = absl::Milliseconds(25);
  // An attempt cut by the sidecar's timeout counts as a failure only if it
  // ran at least this long: a fallback launched just before the timeout
  // had no fair chance to answer.
  absl::Duration timeout_blame_age = absl::ZeroDuration();
  // Late hedges (see the rules above): zero, or no longer than
  // hedge_delay, for none. The engine sets them for a learned delay
  // (adaptive_hedge_delay.h): twice the delay, and half the burst.
  absl::Duration late_hedge_delay = absl::ZeroDuration();
  double hedge_reserve = 0;
  // How long the primary may run before the read gives up on it
  // (hedge/health/give_up_point.h); nullopt: never. The read applies it
  // as the rules above say: not at all with hedge_disabled, and never
  // before hedge_delay.
  std::optional<absl::Duration> give_up_after;
  // The read's key (its path, hashed; 0: none), for the loss rule above.
  uint64_t key = 0;
};

class ReadDecision {
 public:
  ReadDecision(const ReadPolicy& policy, const ReadOptions& options);

  ReadDecision(const ReadDecision&) = delete;
  ReadDecision& operator=(const ReadDecision&) = delete;

  // REQUIRES: called once, before any other event.
  Actions Start(absl::Time now);
  Actions OnHedgeTimer(absl::Time now);
  Actions OnGiveUp(absl::Time now);
  // REQUIRES: `attempt` was launched and neither finished nor cancelled,
  // unless the read has finished (then it is ignored).
  Actions OnAttemptDone(int attempt, AttemptOutcome outcome, absl::Time now);
  Actions OnDeadline(absl::Time now, DeadlineSource source);
  Actions OnCancel(absl::Time now);

  bool finished() const { return finished_; }
  int attempts_launched() const { return launched_; }
  // Information about a launched attempt. REQUIRES: attempt < launched.
  AttemptKind kind(int attempt) const { return attempts_[attempt].kind; }
  size_t replica(int attempt) const { return attempts_[attempt].replica; }

 private:
  struct Attempt {
    AttemptKind kind = AttemptKind::kPrimary;
    size_t replica = 0;
    CircuitTicket ticket;
    Permit permit;
    Permit overlap;  // held while beside a running primary (extras only)
    bool in_flight = false;
    absl::Time started;
  };

  // The give-up fallback, once the give-up point has passed and the hedge
  // has been asked for.
  void GiveUp(absl::Time now, Actions& out);
  void TryLaunchExtra(AttemptKind kind, absl::Time now, Actions& out);
  // Takes the credit an extra attempt of `kind` costs; the reason when
  // there is none (and nothing taken, except as noted in the .cc).
  std::optional<SkipReason> TakeCredit(AttemptKind kind, absl::Time now);
  // The hedge credits the read could draw on: the budget's balance and
  // its batch's credit.
  double HedgeCredits() const;
  // Which attempts in flight count as failures rather than cancelled.
  enum class Blame {
    kNone,      // the caller's cancel or deadline: neutral
    kTimeout,   // the sidecar's timeout: those old enough to have answered
    kLostRace,  // the other attempt won: those past the give-up point
  };
  void CancelInFlight(Actions& out, absl::Time now, Blame blame);
  void FinishWithError(ReadError error, Actions& out);
  // Tells the payoff gate how a launched timer hedge did.
  void ReportHedge(bool won, absl::Time now);
  void FinishAfterFailures(Actions& out);
  int InFlight() const;

  const ReadPolicy policy_;
  const ReadOptions options_;
  // The read's give-up point (see the rules above); nullopt: none.
  const std::optional<absl::Duration> give_up_after_;
  std::array<Attempt, kMaxAttempts> attempts_;
  int launched_ = 0;
  bool finished_ = false;
  // The one extra attempt was launched, or a fallback was skipped: no
  // extra attempt will be tried again. (A skipped timer hedge leaves it
  // open for a fallback.)
  bool extra_decided_ = false;
  bool hedge_tried_ = false;    // the hedge timer has fired and asked
  bool paid_by_batch_ = false;  // the timer hedge took its batch's credit
  // The give-up point passed before the hedge was asked for: the give-up
  // follows the hedge timer.
  bool give_up_waits_for_hedge_ = false;
  // When the timer was armed again, for a late hedge.
  std::optional<absl::Time> late_hedge_at_;
  // Failure history, for the both-failed answer.
  int last_server_error_ = -1;
  bool saw_too_large_ = false;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_DECISION_READ_DECISION_H_
