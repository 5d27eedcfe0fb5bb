#include "hedge/health/replica_picker.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/base/macros.h"
#include "absl/container/inlined_vector.h"

namespace tailgate::hedge {
namespace {

int64_t NanosSinceEpoch(absl::Time t) {
  return absl::ToInt64Nanoseconds(t - absl::UnixEpoch());
}

absl::Time FromNanos(int64_t nanos) {
  if (nanos == std::numeric_limits<int64_t>::min()) {
    return absl::InfinitePast();
  }
  return absl::UnixEpoch() + absl::Nanoseconds(nanos);
}

// splitmix64: a well-mixed 64-bit value from a counter.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

ReplicaPicker::ReplicaPicker(absl::Span<CircuitBreaker* const> breakers,
                             absl::Span<ReplicaLoad* const> loads,
                             double max_ejected_share)
    : breakers_(breakers.begin(), breakers.end()),
      loads_(loads.begin(), loads.end()),
      max_ejected_share_(max_ejected_share),
      retired_(new std::atomic<bool>[breakers.size()]),
      backed_off_until_(new std::atomic<int64_t>[breakers.size()]),
      degraded_(new std::atomic<bool>[breakers.size()]),
      answered_(new std::atomic<bool>[breakers.size()]),
      last_answer_(new std::atomic<int64_t>[breakers.size()]) {
  for (size_t i = 0; i < breakers_.size(); ++i) {
    retired_[i] = false;
    degraded_[i] = false;
    answered_[i] = false;
    last_answer_[i] = std::numeric_limits<int64_t>::min();
    backed_off_until_[i] = std::numeric_limits<int64_t>::min();
  }
  ABSL_ASSERT(!breakers_.empty());
  ABSL_ASSERT(loads_.size() == breakers_.size());
  for (size_t i = 0; i < breakers_.size(); ++i) {
    ABSL_ASSERT(breakers_[i] != nullptr && loads_[i] != nullptr);
  }
}

double ReplicaPicker::Draw() {
  const uint64_t bits =
      Mix(draws_.fetch_add(1, std::memory_order_relaxed)) >> 11;
  return static_cast<double>(bits) * 0x1.0p-53;
}

bool ReplicaPicker::Candidate(size_t replica, absl::Time now) {
  if (Retired(replica)) return false;
  double weight = breakers_[replica]->Weight(now);
  if (weight <= 0) return false;
  if (Degraded(replica)) weight = std::min(weight, kDegradedWeight);
  return weight >= 1 || Draw() < weight;
}

bool ReplicaPicker::AnyServingNotBackedOff(absl::Time now) const {
  // Nearly always none is backed off: one atomic load each, no breaker.
  bool any_backed_off = false;
  for (size_t replica = 0; replica < breakers_.size(); ++replica) {
    any_backed_off = any_backed_off || BackedOff(replica, now);
  }
  if (!any_backed_off) return true;
  for (size_t replica = 0; replica < breakers_.size(); ++replica) {
    if (!Retired(replica) && !BackedOff(replica, now) &&
        breakers_[replica]->IsEligible(now)) {
      return true;
    }
  }
  return false;
}

std::optional<ReplicaPick> ReplicaPicker::PickPrimary(absl::Time now) {
  const size_t n = breakers_.size();
  const uint64_t turn = next_start_.fetch_add(1, std::memory_order_relaxed);
  // Backed-off replicas are left out while another serves; when every
  // serving replica is backed off, none is.
  const bool skip_backed_off = AnyServingNotBackedOff(now);
  auto allowed = [&](size_t replica) {
    return !skip_backed_off || !BackedOff(replica, now);
  };
  absl::InlinedVector<size_t, 8> candidates;
  for (size_t replica = 0; replica < n; ++replica) {
    if (allowed(replica) && Candidate(replica, now)) {
      candidates.push_back(replica);
    }
  }
  if (candidates.empty()) {
    // Every serving replica lost its weight draw: take any that serves.
    for (size_t i = 0; i < n; ++i) {
      const size_t replica = (turn + i) % n;
      if (!Retired(replica) && allowed(replica) &&
          breakers_[replica]->IsEligible(now)) {
        candidates.push_back(replica);
        break;
      }
    }
  }
  if (candidates.empty()) return std::nullopt;
  // The rotation runs over the candidates, not over every replica: with
  // one of three ejected, the other two alternate.
  const size_t first = turn % candidates.size();
  size_t chosen = candidates[first];
  if (candidates.size() > 1) {
    const size_t offset =
        1 + static_cast<size_t>(Draw() * (candidates.size() - 1));
    const size_t other = candidates[(first + offset) % candidates.size()];
    if (loads_[other]->Cost(now) * kTolerance < loads_[chosen]->Cost(now)) {
      chosen = other;
    }
  }
  if (std::optional<CircuitTicket> ticket =
          breakers_[chosen]->TryAcquire(now)) {
    return ReplicaPick{chosen, *ticket};
  }
  // Ejected since the scan: any other that serves.
  for (size_t replica : candidates) {
    if (std::optional<CircuitTicket> ticket =
            breakers_[replica]->TryAcquire(now)) {
      return ReplicaPick{replica, *ticket};
    }
  }
  return std::nullopt;
}

bool ReplicaPicker::AlternateCandidate(size_t replica, absl::Time now) const {
  return !Retired(replica) && !BackedOff(replica, now) &&
         !Degraded(replica) && breakers_[replica]->IsEligible(now);
}

std::optional<ReplicaPick> ReplicaPicker::PickAlternate(size_t exclude,
                                                        absl::Time now) {
  const size_t n = breakers_.size();
  std::optional<size_t> best;
  double best_cost = 0;
  bool best_answered = false;
  for (size_t i = 1; i < n; ++i) {
    const size_t replica = (exclude + i) % n;
    if (!AlternateCandidate(replica, now)) continue;
    const bool answered = answered_[replica].load(std::memory_order_relaxed);
    if (best_answered && !answered) continue;
    const double cost = loads_[replica]->Cost(now);
    if (!best.has_value() || (answered && !best_answered) ||
        cost * kTolerance < best_cost) {
      best = replica;
      best_cost = cost;
      best_answered = answered;
    }
  }
  if (!best.has_value()) return std::nullopt;
  if (std::optional<CircuitTicket> ticket = breakers_[*best]->TryAcquire(now)) {
    return ReplicaPick{*best, *ticket};
  }
  return std::nullopt;
}

bool ReplicaPicker::HasAlternate(size_t exclude, absl::Time now) const {
  const size_t n = breakers_.size();
  for (size_t i = 1; i < n; ++i) {
    if (AlternateCandidate((exclude + i) % n, now)) return true;
  }
  return false;
}

absl::Time ReplicaPicker::BackOff(size_t replica, absl::Time until) {
  const int64_t nanos = NanosSinceEpoch(until);
  std::atomic<int64_t>& end = backed_off_until_[replica];
  int64_t current = end.load(std::memory_order_relaxed);
  while (current < nanos &&
         !end.compare_exchange_weak(current, nanos,
                                    std::memory_order_relaxed)) {
  }
  // The end the exchange replaced, or the later one that stands.
  return FromNanos(current);
}

absl::Time ReplicaPicker::BackedOffUntil(size_t replica) const {
  return FromNanos(backed_off_until_[replica].load(std::memory_order_relaxed));
}

bool ReplicaPicker::BackedOff(size_t replica, absl::Time now) const {
  return NanosSinceEpoch(now) <
         backed_off_until_[replica].load(std::memory_order_relaxed);
}

void ReplicaPicker::OnSuccess(size_t replica, const CircuitTicket& ticket,
                              absl::Time now) {
  breakers_[replica]->OnSuccess(ticket, now);
  answered_[replica].store(true, std::memory_order_relaxed);
  last_answer_[replica].store(NanosSinceEpoch(now), std::memory_order_relaxed);
  if (Degraded(replica)) RecheckDegraded(replica, now);
}

void ReplicaPicker::RecheckDegraded(size_t replica, absl::Time now) {
  if (!breakers_[replica]->WantsEjection(now).has_value()) {
    degraded_[replica].store(false, std::memory_order_relaxed);
  }
}

void ReplicaPicker::OnFailure(size_t replica, const CircuitTicket& ticket,
                              absl::Time now) {
  breakers_[replica]->OnFailure(ticket, now);
  answered_[replica].store(false, std::memory_order_relaxed);
  if (!ticket.probe) MaybeEject(replica, now);
}

void ReplicaPicker::OnCancel(size_t replica, const CircuitTicket& ticket) {
  breakers_[replica]->OnCancel(ticket);
}

bool ReplicaPicker::OnLostPastGiveUp(size_t replica,
                                     const CircuitTicket& ticket, uint64_t key,
                                     absl::Time now) {
  // A repeat is the key's trait only while the replica answers other
  // reads: one that answers nothing is hung, whatever it is asked.
  const absl::Time last_answer = FromNanos(
      last_answer_[replica].load(std::memory_order_relaxed));
  if (!slow_keys_.NoteLoss(replica, key, now, last_answer)) {
    OnCancel(replica, ticket);
    return false;
  }
  OnFailure(replica, ticket, now);
  return true;
}

void ReplicaPicker::MaybeEject(size_t replica, absl::Time now) {
  CircuitBreaker& sick = *breakers_[replica];
  if (!sick.WantsEjection(now).has_value() || max_ejected_share_ <= 0) return;
  MutexLock lock(&eject_mu_);
  const std::optional<EjectReason> reason = sick.WantsEjection(now);
  if (!reason.has_value()) return;  // decided by another thread meanwhile
  const double rate = sick.FailureRate(now);
  size_t live = 0;
  size_t out = 0;  // ejected or probing
  bool healthier_peer = false;
  for (size_t i = 0; i < breakers_.size(); ++i) {
    if (Retired(i)) continue;
    ++live;
    if (i == replica) continue;
    const CircuitBreaker& peer = *breakers_[i];
    if (!peer.IsEligible(now)) {
      ++out;
      continue;
    }
    if (!peer.WantsEjection(now).has_value() &&
        peer.FailureRate(now) <= rate / 2) {
      healthier_peer = true;
    }
  }
  const size_t cap = std::max<size_t>(
      1, static_cast<size_t>(std::floor(max_ejected_share_ * live)));
  // Kept serving by the cap alone, beside a clearly healthier peer: it
  // takes only a trickle of primaries and no extra attempt.
  degraded_[replica].store(healthier_peer && (out + 1 > cap || out + 1 >= live),
                           std::memory_order_relaxed);
  if (!healthier_peer || out + 1 > cap || out + 1 >= live) return;
  sick.Eject(now, *reason);
}

std::optional<ReplicaPick> ReplicaPicker::TakeProbe(absl::Time now) {
  for (size_t i = 0; i < breakers_.size(); ++i) {
    if (Retired(i)) continue;
    if (std::optional<CircuitTicket> ticket =
            breakers_[i]->TryAcquireProbe(now)) {
      return ReplicaPick{i, *ticket};
    }
  }
  return std::nullopt;
}

absl::Time ReplicaPicker::NextProbeDue(absl::Time now) const {
  absl::Time due = absl::InfiniteFuture();
  for (size_t i = 0; i < breakers_.size(); ++i) {
    if (Retired(i)) continue;
    if (breakers_[i]->WantsProbe(now)) return now;
    due = std::min(due, breakers_[i]->ejected_until());
  }
  return due;
}

void ReplicaPicker::Retire(size_t replica) {
  retired_[replica].store(true, std::memory_order_release);
}

}  // namespace tailgate::hedge
