#include "server/observability/circuit_log.h"

namespace tailgate::server {
namespace {

using hedge::CircuitState;

// How long a replica has been out, to the millisecond.
absl::Duration Rounded(absl::Duration d) {
  return absl::Trunc(d, absl::Milliseconds(1));
}

}  // namespace

void CircuitLog::OnCircuitTransition(
    const std::string& upstream, const std::string& replica,
    const hedge::CircuitTransition& transition) {
  const absl::Time now = clock_.Now();
  Decision decision;
  {
    hedge::MutexLock lock(&mu_);
    decision = Decide({upstream, replica}, transition, now);
  }
  const Outage& outage = decision.outage;
  const char* from = hedge::ReplicaStateName(transition.from);
  const char* to = hedge::ReplicaStateName(transition.to);
  switch (decision.line) {
    case Line::kNone:
      return;
    case Line::kEjected:
      log_.Warn("replica_state",
                {{"upstream", upstream},
                 {"replica", replica},
                 {"from", from},
                 {"to", to},
                 {"reason", hedge::EjectReasonName(transition.reason)},
                 {"ejected_for", transition.ejected_for},
                 {"generation", transition.generation}});
      return;
    case Line::kStillEjected:
      // A reminder is only due once `since` is known (Decide).
      log_.Warn("replica_still_ejected",
                {{"upstream", upstream},
                 {"replica", replica},
                 {"probes_failed", outage.probes_failed},
                 {"for", Rounded(now - outage.since.value_or(now))},
                 {"ejected_for", transition.ejected_for},
                 {"generation", transition.generation}});
      return;
    case Line::kServing:
      if (outage.since.has_value()) {
        log_.Info("replica_state", {{"upstream", upstream},
                                    {"replica", replica},
                                    {"from", from},
                                    {"to", to},
                                    {"for", Rounded(now - *outage.since)},
                                    {"probes_failed", outage.probes_failed},
                                    {"generation", transition.generation}});
      } else {
        log_.Info("replica_state", {{"upstream", upstream},
                                    {"replica", replica},
                                    {"from", from},
                                    {"to", to},
                                    {"generation", transition.generation}});
      }
      return;
  }
}

void CircuitLog::OnReplicaBackOff(const std::string& upstream,
                                  const std::string& replica,
                                  const hedge::BackOffChange& change) {
  const absl::Time now = clock_.Now();
  bool log_line = false;
  uint64_t unlogged = 0;
  {
    hedge::MutexLock lock(&mu_);
    const std::pair<std::string, std::string> key{upstream, replica};
    if (!back_offs_.contains(key)) ForgetQuiet(now);
    BackOffs& back_offs = back_offs_[key];
    back_offs.last_heard = now;
    if (change.backed_off) {
      if (back_offs.last_line.has_value() &&
          now - *back_offs.last_line < kReminderInterval) {
        back_offs.logged = false;
        ++back_offs.unlogged;
      } else {
        log_line = true;
        unlogged = back_offs.unlogged;
        back_offs.logged = true;
        back_offs.last_line = now;
        back_offs.unlogged = 0;
      }
    } else {
      log_line = back_offs.logged;
      back_offs.logged = false;
    }
  }
  if (!log_line) return;
  if (!change.backed_off) {
    log_.Info("replica_back_off_ended", {{"upstream", upstream},
                                         {"replica", replica},
                                         {"for", Rounded(change.lasted)}});
  } else if (unlogged > 0) {
    log_.Warn("replica_backed_off", {{"upstream", upstream},
                                     {"replica", replica},
                                     {"status", change.status},
                                     {"retry_after", change.retry_after},
                                     {"back_offs_unlogged", unlogged}});
  } else {
    log_.Warn("replica_backed_off", {{"upstream", upstream},
                                     {"replica", replica},
                                     {"status", change.status},
                                     {"retry_after", change.retry_after}});
  }
}

CircuitLog::Decision CircuitLog::Decide(
    const std::pair<std::string, std::string>& key,
    const hedge::CircuitTransition& transition, absl::Time now) {
  if (!replicas_.contains(key)) ForgetQuiet(now);
  Outage& outage = replicas_[key];
  // Generation 1 is a new breaker's first transition (a replica that
  // joined again, or whose circuit settings a reload changed): what was
  // known of the old one no longer applies.
  if (transition.generation == 1) {
    outage = Outage{};
  } else if (transition.generation <= outage.generation) {
    return {};
  }
  outage.generation = transition.generation;
  outage.last_heard = now;

  switch (transition.to) {
    case CircuitState::kOpen:
      if (!outage.out || transition.from == CircuitState::kClosed) {
        // Leaves service (or is first heard of as it is ejected again).
        outage.out = true;
        outage.since = now;
        outage.last_line = now;
        outage.probes_failed =
            transition.reason == hedge::EjectReason::kProbe ? 1 : 0;
        return {Line::kEjected, outage};
      }
      if (transition.reason == hedge::EjectReason::kProbe) {
        ++outage.probes_failed;
      }
      if (!outage.since.has_value()) {
        // Out since before we knew: count from here.
        outage.since = now;
        outage.last_line = now;
        return {};
      }
      if (now - outage.last_line < kReminderInterval) return {};
      outage.last_line = now;
      return {Line::kStillEjected, outage};
    case CircuitState::kHalfOpen:
      if (!outage.out) {
        outage.out = true;
        outage.since.reset();
        outage.probes_failed = 0;
      }
      return {};
    case CircuitState::kClosed: {
      Decision back{Line::kServing, outage};
      if (!outage.out) back.outage.since.reset();
      outage.out = false;
      outage.since.reset();
      outage.probes_failed = 0;
      outage.last_line = now;
      return back;
    }
  }
  return {};
}

void CircuitLog::ForgetQuiet(absl::Time now) {
  absl::erase_if(replicas_, [now](const auto& entry) {
    return now - entry.second.last_heard > kForgetAfter;
  });
  absl::erase_if(back_offs_, [now](const auto& entry) {
    return now - entry.second.last_heard > kForgetAfter;
  });
}

}  // namespace tailgate::server
