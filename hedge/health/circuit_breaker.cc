#include "hedge/health/circuit_breaker.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hedge/errors/field_error.h"

namespace tailgate::hedge {
namespace {

absl::Status DurationIn(const char* field, absl::Duration value,
                        absl::Duration low, absl::Duration high) {
  if (value < low || value > high) {
    return FieldError(
        field, absl::StrCat("must be in [", absl::FormatDuration(low), ", ",
                            absl::FormatDuration(high), "], got ",
                            absl::FormatDuration(value)));
  }
  return absl::OkStatus();
}

}  // namespace

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

const char* ReplicaStateName(CircuitState state) {
  switch (state) {
    case CircuitState::kClosed:
      return "serving";
    case CircuitState::kOpen:
      return "ejected";
    case CircuitState::kHalfOpen:
      return "probing";
  }
  return "unknown";
}

const char* EjectReasonName(EjectReason reason) {
  switch (reason) {
    case EjectReason::kConsecutive:
      return "consecutive";
    case EjectReason::kFailureRate:
      return "failure_rate";
    case EjectReason::kProbe:
      return "probe";
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
  // Written so that NaN fails too.
  if (!(config.failure_rate > 0 && config.failure_rate <= 1)) {
    return FieldError(
        "ejection_failure_rate",
        absl::StrFormat("must be in (0, 1], got %.10g", config.failure_rate));
  }
  if (config.min_requests < 1 || config.min_requests > 1000000) {
    return FieldError(
        "ejection_min_requests",
        absl::StrCat("must be in [1, 1000000], got ", config.min_requests));
  }
  if (absl::Status s = DurationIn("ejection_window", config.window,
                                  absl::Milliseconds(100), absl::Hours(1));
      !s.ok()) {
    return s;
  }
  if (config.max_ejection_time < config.cooldown ||
      config.max_ejection_time > absl::Hours(1)) {
    return FieldError(
        "max_ejection_time",
        absl::StrCat("must be in [cooldown (",
                     absl::FormatDuration(config.cooldown), "), 1h], got ",
                     absl::FormatDuration(config.max_ejection_time)));
  }
  if (config.probe_successes < 1 || config.probe_successes > 100) {
    return FieldError(
        "probe_successes",
        absl::StrCat("must be in [1, 100], got ", config.probe_successes));
  }
  if (absl::Status s = DurationIn("ramp_up", config.ramp_up,
                                  absl::ZeroDuration(), absl::Hours(1));
      !s.ok()) {
    return s;
  }
  if (!(config.max_ejected_share >= 0 && config.max_ejected_share <= 1)) {
    return FieldError("max_ejected_share",
                      absl::StrFormat("must be in [0, 1], got %.10g",
                                      config.max_ejected_share));
  }
  return absl::OkStatus();
}

CircuitBreaker::CircuitBreaker(const CircuitConfig& config,
                               TransitionListener listener)
    : config_(config), listener_(std::move(listener)), window_(config.window) {}

bool CircuitBreaker::IsEligible(absl::Time /*now*/) const {
  MutexLock lock(&mu_);
  return state_ == CircuitState::kClosed;
}

std::optional<CircuitTicket> CircuitBreaker::TryAcquire(absl::Time /*now*/) {
  MutexLock lock(&mu_);
  if (state_ != CircuitState::kClosed) return std::nullopt;
  return CircuitTicket{generation_, /*probe=*/false};
}

bool CircuitBreaker::WantsProbe(absl::Time now) const {
  MutexLock lock(&mu_);
  return WantsProbeLocked(now);
}

bool CircuitBreaker::WantsProbeLocked(absl::Time now) const {
  switch (state_) {
    case CircuitState::kClosed:
      return false;
    case CircuitState::kOpen:
      return now >= ejected_until_;
    case CircuitState::kHalfOpen:
      return !probe_out_;
  }
  return false;
}

std::optional<CircuitTicket> CircuitBreaker::TryAcquireProbe(absl::Time now) {
  std::optional<CircuitTransition> transition;
  CircuitTicket ticket;
  {
    MutexLock lock(&mu_);
    if (!WantsProbeLocked(now)) return std::nullopt;
    if (state_ == CircuitState::kOpen) {
      transition = MoveTo(CircuitState::kHalfOpen, now);
    }
    probe_out_ = true;
    ++probes_;
    ticket = CircuitTicket{generation_, /*probe=*/true};
  }
  Notify(transition);
  return ticket;
}

absl::Time CircuitBreaker::ejected_until() const {
  MutexLock lock(&mu_);
  return state_ == CircuitState::kOpen ? ejected_until_
                                       : absl::InfiniteFuture();
}

void CircuitBreaker::OnSuccess(const CircuitTicket& ticket, absl::Time now) {
  std::optional<CircuitTransition> transition;
  {
    MutexLock lock(&mu_);
    if (ticket.generation != generation_) return;
    if (state_ == CircuitState::kClosed) {
      consecutive_failures_ = 0;
      window_.Add(now, /*failed=*/false);
    } else if (state_ == CircuitState::kHalfOpen && ticket.probe &&
               probe_out_) {
      probe_out_ = false;
      if (++probe_passes_ >= config_.probe_successes) {
        transition = MoveTo(CircuitState::kClosed, now);
        returned_at_ = now;
      }
    }
  }
  Notify(transition);
}

void CircuitBreaker::OnFailure(const CircuitTicket& ticket, absl::Time now) {
  std::optional<CircuitTransition> transition;
  {
    MutexLock lock(&mu_);
    if (ticket.generation != generation_) return;
    if (state_ == CircuitState::kClosed) {
      ++consecutive_failures_;
      window_.Add(now, /*failed=*/true);
    } else if (state_ == CircuitState::kHalfOpen && ticket.probe &&
               probe_out_) {
      ++probe_failures_;
      transition = EjectLocked(now, EjectReason::kProbe);
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

std::optional<EjectReason> CircuitBreaker::WantsEjection(absl::Time now) const {
  MutexLock lock(&mu_);
  return WantsEjectionLocked(now);
}

std::optional<EjectReason> CircuitBreaker::WantsEjectionLocked(
    absl::Time now) const {
  if (state_ != CircuitState::kClosed) return std::nullopt;
  if (consecutive_failures_ >= config_.failure_threshold) {
    return EjectReason::kConsecutive;
  }
  const int64_t total = window_.total(now);
  if (total >= config_.min_requests &&
      window_.failures(now) >= config_.failure_rate * total) {
    return EjectReason::kFailureRate;
  }
  return std::nullopt;
}

void CircuitBreaker::Eject(absl::Time now, EjectReason reason) {
  std::optional<CircuitTransition> transition;
  {
    MutexLock lock(&mu_);
    if (state_ != CircuitState::kClosed) return;
    transition = EjectLocked(now, reason);
  }
  Notify(transition);
}

CircuitTransition CircuitBreaker::EjectLocked(absl::Time now,
                                              EjectReason reason) {
  // Served a full max_ejection_time since it came back: a fresh start.
  if (state_ == CircuitState::kClosed &&
      now - returned_at_ >= config_.max_ejection_time) {
    ejections_in_row_ = 0;
  }
  ++ejections_in_row_;
  absl::Duration length = config_.cooldown;
  for (int i = 1; i < ejections_in_row_ && length < config_.max_ejection_time;
       ++i) {
    length *= 2;
  }
  length = std::min(length, config_.max_ejection_time);
  ++ejections_[static_cast<int>(reason)];
  CircuitTransition transition = MoveTo(CircuitState::kOpen, now);
  ejected_until_ = now + length;
  ejected_for_ = length;
  transition.reason = reason;
  transition.ejected_for = length;
  return transition;
}

double CircuitBreaker::FailureRate(absl::Time now) const {
  MutexLock lock(&mu_);
  return window_.failure_rate(now);
}

double CircuitBreaker::Weight(absl::Time now) const {
  MutexLock lock(&mu_);
  return WeightLocked(now);
}

double CircuitBreaker::WeightLocked(absl::Time now) const {
  if (state_ != CircuitState::kClosed) return 0;
  if (config_.ramp_up <= absl::ZeroDuration() ||
      returned_at_ == absl::InfinitePast()) {
    return 1;
  }
  const double progress =
      absl::FDivDuration(now - returned_at_, config_.ramp_up);
  if (progress >= 1) return 1;
  return std::max(kMinWeight, kMinWeight + (1 - kMinWeight) * progress);
}

CircuitSnapshot CircuitBreaker::Snapshot(absl::Time now) const {
  MutexLock lock(&mu_);
  CircuitSnapshot snapshot;
  snapshot.state = state_;
  snapshot.generation = generation_;
  snapshot.consecutive_failures = consecutive_failures_;
  snapshot.window_outcomes = window_.total(now);
  snapshot.window_failures = window_.failures(now);
  snapshot.ejections = ejections_;
  snapshot.probes = probes_;
  snapshot.probe_failures = probe_failures_;
  snapshot.weight = WeightLocked(now);
  snapshot.ejected_for = ejected_for_;
  return snapshot;
}

CircuitTransition CircuitBreaker::MoveTo(CircuitState to, absl::Time now) {
  (void)now;
  const CircuitState from = state_;
  state_ = to;
  ++generation_;
  consecutive_failures_ = 0;
  probe_out_ = false;
  probe_passes_ = 0;
  window_.Clear();
  if (to != CircuitState::kOpen) ejected_until_ = absl::InfiniteFuture();
  return CircuitTransition{from, to, generation_};
}

void CircuitBreaker::Notify(
    const std::optional<CircuitTransition>& transition) const {
  if (transition.has_value() && listener_ != nullptr) listener_(*transition);
}

}  // namespace tailgate::hedge
