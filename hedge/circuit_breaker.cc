#include "hedge/circuit_breaker.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "hedge/config/field_error.h"

namespace tailgate::hedge {

const char* CircuitStateName(CircuitState state) {
  switch (state) {
    case CircuitState::kClosed:
      return "closed";
    case CircuitState::kOpen:
      return "open";
    case CircuitState::kHalfOpen:
      return "half_open";
  }
  return "unknown";
}

absl::Status ValidateCircuitConfig(const CircuitConfig& config) {
  if (config.failure_threshold < 1) {
    return FieldError(
        "failure_threshold",
        absl::StrCat("must be at least 1, got ", config.failure_threshold));
  }
  if (config.cooldown <= absl::ZeroDuration() ||
      config.cooldown == absl::InfiniteDuration()) {
    return FieldError("cooldown",
                      absl::StrCat("must be positive and finite, got ",
                                   absl::FormatDuration(config.cooldown)));
  }
  return absl::OkStatus();
}

CircuitBreaker::CircuitBreaker(const CircuitConfig& config,
                               TransitionListener listener)
    : config_(config), listener_(std::move(listener)) {}

bool CircuitBreaker::IsEligible(absl::Time now) const {
  MutexLock lock(&mu_);
  return IsEligibleLocked(now);
}

bool CircuitBreaker::IsEligibleLocked(absl::Time now) const {
  switch (state_) {
    case CircuitState::kClosed:
      return true;
    case CircuitState::kOpen:
      return now - opened_at_ >= config_.cooldown;
    case CircuitState::kHalfOpen:
      return !probe_out_;
  }
  return false;
}

std::optional<CircuitTicket> CircuitBreaker::TryAcquire(absl::Time now) {
  std::optional<Transition> transition;
  CircuitTicket ticket;
  {
    MutexLock lock(&mu_);
    if (!IsEligibleLocked(now)) return std::nullopt;
    if (state_ == CircuitState::kClosed) {
      return CircuitTicket{generation_, /*probe=*/false};
    }
    if (state_ == CircuitState::kOpen) {
      transition = MoveTo(CircuitState::kHalfOpen, now);
    }
    probe_out_ = true;
    ticket = CircuitTicket{generation_, /*probe=*/true};
  }
  Notify(transition);
  return ticket;
}

void CircuitBreaker::OnSuccess(const CircuitTicket& ticket, absl::Time now) {
  std::optional<Transition> transition;
  {
    MutexLock lock(&mu_);
    if (ticket.generation != generation_) return;
    if (state_ == CircuitState::kClosed) {
      consecutive_failures_ = 0;
    } else if (state_ == CircuitState::kHalfOpen && ticket.probe &&
               probe_out_) {
      transition = MoveTo(CircuitState::kClosed, now);
    }
  }
  Notify(transition);
}

void CircuitBreaker::OnFailure(const CircuitTicket& ticket, absl::Time now) {
  std::optional<Transition> transition;
  {
    MutexLock lock(&mu_);
    if (ticket.generation != generation_) return;
    if (state_ == CircuitState::kClosed) {
      if (++consecutive_failures_ >= config_.failure_threshold) {
        transition = MoveTo(CircuitState::kOpen, now);
      }
    } else if (state_ == CircuitState::kHalfOpen && ticket.probe &&
               probe_out_) {
      transition = MoveTo(CircuitState::kOpen, now);
    }
  }
  Notify(transition);
}

void CircuitBreaker::OnCancel(const CircuitTicket& ticket) {
  MutexLock lock(&mu_);
  if (ticket.generation == generation_ && ticket.probe &&
      state_ == CircuitState::kHalfOpen) {
    probe_out_ = false;
  }
}

CircuitSnapshot CircuitBreaker::Snapshot() const {
  MutexLock lock(&mu_);
  return CircuitSnapshot{state_, generation_, consecutive_failures_};
}

CircuitBreaker::Transition CircuitBreaker::MoveTo(CircuitState to,
                                                  absl::Time now) {
  const CircuitState from = state_;
  state_ = to;
  ++generation_;
  consecutive_failures_ = 0;
  probe_out_ = false;
  if (to == CircuitState::kOpen) opened_at_ = now;
  return Transition{from, to, generation_};
}

void CircuitBreaker::Notify(const std::optional<Transition>& transition) const {
  if (transition.has_value() && listener_ != nullptr) {
    listener_(transition->from, transition->to, transition->generation);
  }
}

}  // namespace tailgate::hedge
