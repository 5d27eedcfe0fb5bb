#include "hedge/decision/read_decision.h"

#include <algorithm>
#include <utility>

#include "absl/base/macros.h"

namespace tailgate::hedge {
namespace {

Action Launch(int attempt, size_t replica, AttemptKind kind) {
  Action action{Action::Type::kLaunch};
  action.attempt = attempt;
  action.replica = replica;
  action.kind = kind;
  return action;
}

Action ArmHedgeTimer(absl::Time at) {
  Action action{Action::Type::kArmHedgeTimer};
  action.at = at;
  return action;
}

Action Cancel(int attempt, bool failed) {
  Action action{Action::Type::kCancel};
  action.attempt = attempt;
  action.failed = failed;
  return action;
}

Action ArmGiveUpTimer(absl::Time at) {
  Action action{Action::Type::kArmGiveUpTimer};
  action.at = at;
  return action;
}

Action GaveUp(int attempt) {
  Action action{Action::Type::kGaveUp};
  action.attempt = attempt;
  return action;
}

Action ExtraSkipped(SkipReason reason) {
  Action action{Action::Type::kExtraSkipped};
  action.skip = reason;
  return action;
}

Action FinishWith(int attempt) {
  Action action{Action::Type::kFinish};
  action.attempt = attempt;
  return action;
}

Action FinishWith(ReadError error) {
  Action action{Action::Type::kFinish};
  action.error = error;
  return action;
}

// A read with hedging disabled gets no speculative attempt, and a give-up
// fallback is one: it has no give-up point. Any other read's is never
// before its hedge delay, so that only the hedge budget and the payoff
// gate decide on a primary that is merely late.
std::optional<absl::Duration> GiveUpPointOf(const ReadOptions& options) {
  if (options.hedge_disabled || !options.give_up_after.has_value()) {
    return std::nullopt;
  }
  return std::max(*options.give_up_after, options.hedge_delay);
}

}  // namespace

const char* AttemptKindName(AttemptKind kind) {
  switch (kind) {
    case AttemptKind::kPrimary:
      return "primary";
    case AttemptKind::kHedge:
      return "hedge";
    case AttemptKind::kFallback:
      return "fallback";
  }
  return "unknown";
}

const char* ReadErrorName(ReadError error) {
  switch (error) {
    case ReadError::kOverloaded:
      return "overloaded";
    case ReadError::kNoReplica:
      return "no_replica";
    case ReadError::kDeadlineExceeded:
      return "deadline_exceeded";
    case ReadError::kCancelled:
      return "cancelled";
    case ReadError::kTooLarge:
      return "too_large";
    case ReadError::kUpstreamFailure:
      return "upstream_failure";
  }
  return "unknown";
}

const char* SkipReasonName(SkipReason reason) {
  switch (reason) {
    case SkipReason::kNoReplica:
      return "no_replica";
    case SkipReason::kNoCapacity:
      return "no_capacity";
    case SkipReason::kNoBudget:
      return "no_budget";
    case SkipReason::kNoRetryBudget:
      return "no_retry_budget";
    case SkipReason::kNoTenantBudget:
      return "no_tenant_budget";
  }
  return "unknown";
}

ReadDecision::ReadDecision(const ReadPolicy& policy, const ReadOptions& options)
    : policy_(policy),
      options_(options),
      give_up_after_(GiveUpPointOf(options)) {}

Actions ReadDecision::Start(absl::Time now) {
  Actions out;
  if (finished_ || launched_ > 0) return out;
  std::optional<ReplicaPick> pick = policy_.picker->PickPrimary(now);
  if (!pick.has_value()) {
    FinishWithError(ReadError::kNoReplica, out);
    return out;
  }
  std::optional<Permit> permit = policy_.limits->TryStartAttempt();
  if (!permit.has_value()) {
    policy_.picker->OnCancel(pick->replica, pick->ticket);
    FinishWithError(ReadError::kOverloaded, out);
    return out;
  }
  attempts_[0] = Attempt{AttemptKind::kPrimary,
                         pick->replica,
                         pick->ticket,
                         *std::move(permit),
                         /*overlap=*/Permit(),
                         /*in_flight=*/true,
                         now};
  launched_ = 1;
  out.push_back(Launch(0, pick->replica, AttemptKind::kPrimary));
  if (!options_.hedge_disabled) {
    out.push_back(ArmHedgeTimer(now + options_.hedge_delay));
  }
  if (give_up_after_.has_value()) {
    out.push_back(ArmGiveUpTimer(now + *give_up_after_));
  }
  return out;
}

Actions ReadDecision::OnGiveUp(absl::Time now) {
  Actions out;
  if (finished_ || !give_up_after_.has_value()) return out;
  // Timers due together fire in no particular order, and the transport may
  // move the hedge timer later: the hedge is asked for first, always.
  if (!hedge_tried_) {
    give_up_waits_for_hedge_ = true;
    return out;
  }
  GiveUp(now, out);
  return out;
}

void ReadDecision::GiveUp(absl::Time now, Actions& out) {
  if (launched_ != 1 || !attempts_[0].in_flight || extra_decided_) return;
  TryLaunchExtra(AttemptKind::kFallback, now, out);
  if (launched_ < 2) {
    // Nothing to replace it with: the primary goes on, and a fallback may
    // still follow its failure.
    extra_decided_ = false;
    return;
  }
  out.push_back(GaveUp(0));
}

Actions ReadDecision::OnHedgeTimer(absl::Time now) {
  Actions out;
  if (finished_ || launched_ == 0 || options_.hedge_disabled ||
      extra_decided_ || hedge_tried_) {
    return out;
  }
  if (late_hedge_at_.has_value()) {
    if (now < *late_hedge_at_) return out;  // not the late timer yet
  } else if (options_.late_hedge_delay > options_.hedge_delay &&
             HedgeCredits() < options_.hedge_reserve) {
    const absl::Time late = attempts_[0].started + options_.late_hedge_delay;
    if (late > now) {
      late_hedge_at_ = late;
      out.push_back(ArmHedgeTimer(late));
      return out;
    }
  }
  hedge_tried_ = true;
  TryLaunchExtra(AttemptKind::kHedge, now, out);
  if (give_up_waits_for_hedge_) GiveUp(now, out);
  return out;
}

Actions ReadDecision::OnAttemptDone(int attempt, AttemptOutcome outcome,
                                    absl::Time now) {
  Actions out;
  if (finished_) return out;
  const bool valid =
      attempt >= 0 && attempt < launched_ && attempts_[attempt].in_flight;
  ABSL_ASSERT(valid);
  if (!valid) return out;
  Attempt& done = attempts_[attempt];
  done.in_flight = false;
  done.permit.Release();
  done.overlap.Release();
  ReplicaPicker& picker = *policy_.picker;
  if (outcome == AttemptOutcome::kSuccess) {
    picker.OnSuccess(done.replica, done.ticket, now);
    ReportHedge(/*won=*/attempt == 1, now);
    CancelInFlight(out, now, Blame::kLostRace);
    out.push_back(FinishWith(attempt));
    finished_ = true;
    return out;
  }
  picker.OnFailure(done.replica, done.ticket, now);
  if (outcome == AttemptOutcome::kServerError) last_server_error_ = attempt;
  if (outcome == AttemptOutcome::kTooLarge) saw_too_large_ = true;
  // The primary failed before the hedge timer: fall back at once.
  if (!extra_decided_) TryLaunchExtra(AttemptKind::kFallback, now, out);
  if (InFlight() == 0) FinishAfterFailures(out);
  return out;
}

Actions ReadDecision::OnDeadline(absl::Time now, DeadlineSource source) {
  Actions out;
  if (finished_) return out;
  ReportHedge(/*won=*/false, now);
  CancelInFlight(out, now,
                 source == DeadlineSource::kSidecarTimeout ? Blame::kTimeout
                                                           : Blame::kNone);
  FinishWithError(ReadError::kDeadlineExceeded, out);
  return out;
}

Actions ReadDecision::OnCancel(absl::Time now) {
  Actions out;
  if (finished_) return out;
  CancelInFlight(out, now, Blame::kNone);
  FinishWithError(ReadError::kCancelled, out);
  return out;
}

void ReadDecision::TryLaunchExtra(AttemptKind kind, absl::Time now,
                                  Actions& out) {
  // A skipped hedge may still be followed by a fallback; a skipped
  // fallback is final.
  extra_decided_ = kind == AttemptKind::kFallback;
  const size_t primary = attempts_[0].replica;
  ReplicaPicker& picker = *policy_.picker;
  // Cheapest refusal first, and nothing taken that a later check would
  // have to give back, except in the race below.
  if (!picker.HasAlternate(primary, now)) {
    out.push_back(ExtraSkipped(SkipReason::kNoReplica));
    return;
  }
  std::optional<Permit> permit = policy_.limits->TryStartAttempt();
  if (!permit.has_value()) {
    out.push_back(ExtraSkipped(SkipReason::kNoCapacity));
    return;
  }
  std::optional<Permit> overlap;
  if (attempts_[0].in_flight) {
    overlap = policy_.limits->TryStartOverlap();
    if (!overlap.has_value()) {
      out.push_back(ExtraSkipped(SkipReason::kNoCapacity));
      return;
    }
  }
  if (std::optional<SkipReason> refused = TakeCredit(kind, now)) {
    out.push_back(ExtraSkipped(*refused));
    return;
  }
  // Another read may have taken the last probe since HasAlternate; the
  // credit is then spent without an attempt, which keeps the bound.
  std::optional<ReplicaPick> pick = picker.PickAlternate(primary, now);
  if (!pick.has_value()) {
    out.push_back(ExtraSkipped(SkipReason::kNoReplica));
    return;
  }
  attempts_[1] = Attempt{kind,
                         pick->replica,
                         pick->ticket,
                         *std::move(permit),
                         overlap.has_value() ? *std::move(overlap) : Permit(),
                         /*in_flight=*/true,
                         now};
  launched_ = 2;
  extra_decided_ = true;
  out.push_back(Launch(1, pick->replica, kind));
}

double ReadDecision::HedgeCredits() const {
  const double shared = policy_.budget->credits();
  if (policy_.batch == nullptr) return shared;
  return shared + policy_.batch->credits(*policy_.budget);
}

std::optional<SkipReason> ReadDecision::TakeCredit(AttemptKind kind,
                                                   absl::Time now) {
  if (kind == AttemptKind::kFallback) {
    if (policy_.retry_budget->TryConsume(now)) return std::nullopt;
    return SkipReason::kNoRetryBudget;
  }
  // A batch's reads hedge on the credit they earned first, which alone
  // bounds what they spend: the payoff gate neither holds them back nor
  // learns from them (a batch's keys are late together when the sidecar
  // is busy with the batch, and would teach it that hedges do not pay).
  if (policy_.batch != nullptr && policy_.batch->TryConsume(*policy_.budget)) {
    paid_by_batch_ = true;
    return std::nullopt;
  }
  if (policy_.payoff != nullptr &&
      !policy_.payoff->AllowHedge(policy_.tenant_slot)) {
    // Hedges that stopped winning: the gate holds back part of the
    // speculative spend, counted as a want of budget.
    return SkipReason::kNoBudget;
  }
  if (policy_.tenant_credits != nullptr) {
    switch (policy_.tenant_credits->TryConsume(policy_.tenant_slot,
                                               *policy_.budget, now)) {
      case TenantCredits::Result::kTaken:
        return std::nullopt;
      case TenantCredits::Result::kNoTenantCredit:
        return SkipReason::kNoTenantBudget;
      case TenantCredits::Result::kNoSharedCredit:
        return SkipReason::kNoBudget;
    }
  }
  if (policy_.budget->TryConsume()) return std::nullopt;
  return SkipReason::kNoBudget;
}

void ReadDecision::CancelInFlight(Actions& out, absl::Time now, Blame blame) {
  for (int i = 0; i < launched_; ++i) {
    Attempt& attempt = attempts_[i];
    if (!attempt.in_flight) continue;
    attempt.in_flight = false;
    attempt.permit.Release();
    attempt.overlap.Release();
    const absl::Duration ran = now - attempt.started;
    bool blamed = false;
    switch (blame) {
      case Blame::kNone:
        break;
      case Blame::kTimeout:
        blamed = ran >= options_.timeout_blame_age;
        break;
      case Blame::kLostRace:
        if (give_up_after_.has_value() && ran >= *give_up_after_) {
          blamed = policy_.picker->OnLostPastGiveUp(
              attempt.replica, attempt.ticket, options_.key, now);
          out.push_back(Cancel(i, blamed));
          continue;
        }
        break;
    }
    if (blamed) {
      policy_.picker->OnFailure(attempt.replica, attempt.ticket, now);
    } else {
      policy_.picker->OnCancel(attempt.replica, attempt.ticket);
    }
    out.push_back(Cancel(i, blamed));
  }
}

void ReadDecision::FinishWithError(ReadError error, Actions& out) {
  out.push_back(FinishWith(error));
  finished_ = true;
}

void ReadDecision::ReportHedge(bool won, absl::Time now) {
  if (policy_.payoff == nullptr || launched_ < 2 ||
      attempts_[1].kind != AttemptKind::kHedge || paid_by_batch_) {
    return;
  }
  // Beaten before it had run half a hedge delay: the read was barely
  // late (its primary was answering as the hedge left), which says
  // nothing of whether hedges pay.
  if (!won && now - attempts_[1].started < options_.hedge_delay / 2) return;
  policy_.payoff->OnHedgeResult(policy_.tenant_slot, won);
}

void ReadDecision::FinishAfterFailures(Actions& out) {
  if (last_server_error_ >= 0) {
    out.push_back(FinishWith(last_server_error_));
    finished_ = true;
  } else {
    FinishWithError(
        saw_too_large_ ? ReadError::kTooLarge : ReadError::kUpstreamFailure,
        out);
  }
}

int ReadDecision::InFlight() const {
  int in_flight = 0;
  for (int i = 0; i < launched_; ++i) in_flight += attempts_[i].in_flight;
  return in_flight;
}

}  // namespace tailgate::hedge
