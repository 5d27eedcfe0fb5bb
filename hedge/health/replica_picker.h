// ReplicaPicker: chooses the replica for each attempt, and applies the
// set's guard rails to ejections.
//
// Primaries go by power of two choices over ReplicaLoad's cost: candidate
// A is the next in a rotation over the serving replicas, one step per
// read; candidate B is another serving replica drawn at random; B is taken
// only when its cost is below A's by more than kTolerance, so replicas
// that cost about the same are taken in rotation (equal replicas stay
// balanced exactly), and a slow, busy or hung one gets the share its cost
// earns. A replica ramping up after an ejection (CircuitBreaker::Weight)
// is a candidate with probability equal to its weight. The extra attempt
// (hedge or fallback) goes to the cheapest serving replica other than the
// primary's; on a tie within kTolerance, the first after the primary's.
// A retired replica (one that left its set while reads of the old set are
// in flight) is never picked again.
//
// Degraded: a replica that wants ejection (CircuitBreaker::WantsEjection)
// while the guard rails below keep it serving, because the cap is reached
// and another serving replica is clearly healthier, is degraded until it
// stops wanting ejection (its outcomes are looked at again as they come,
// and it is ejected as soon as the cap allows). It takes no extra attempt,
// and primaries only as a candidate of weight kDegradedWeight (like a
// replica ramping up): a trickle that tells when it answers well again.
// When every replica fails alike none is degraded, as none is ejected;
// nor with a max_ejected_share of 0, which turns ejection off.
//
// Extra attempts go to a replica whose last outcome was an answer when
// there is one:
// a second chance goes where answers come from, not to a replica that
// has not answered yet (a new one, or one whose last attempt failed, its
// cost decayed while it was idle).
//
// Back-off: a replica that asked for time (an overload answer's
// Retry-After, BackOff) takes no primary until then while another serving
// replica has not asked for time, and no extra attempt at all: when every
// serving replica is backed off, reads still go out, one attempt each,
// never hedged nor fallen back.
//
// Outcomes go through the picker (OnSuccess, OnFailure, OnCancel) so that
// an ejection the replica's breaker wants passes the set's guard rails:
//  - at most max(1, floor(max_ejected_share * replicas)) ejected (or
//    probing) at once, none when the share is 0, and never the last
//    serving replica;
//  - only when another serving replica is clearly healthier (its failure
//    rate at most half this one's, and no ejection wanted): when every
//    replica fails alike — every replica slowed down, or a bad deploy
//    everywhere — ejecting would only move the load, and nothing is
//    ejected.
//
// Probes: TakeProbe hands out the probe ticket of a replica whose
// ejection is over (the caller sends a probe on the side, never a user's
// only attempt); NextProbeDue says when one will want it.
//
// Thread safety: safe from any thread. The breakers and loads are not
// owned and must outlive the picker.

#ifndef TAILGATE_HEDGE_HEALTH_REPLICA_PICKER_H_
#define TAILGATE_HEDGE_HEALTH_REPLICA_PICKER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hedge/health/circuit_breaker.h"
#include "hedge/health/replica_load.h"
#include "hedge/health/slow_keys.h"
#include "hedge/sync/mutex.h"

namespace tailgate::hedge {

struct ReplicaPick {
  size_t replica = 0;  // index into the breakers given at construction
  CircuitTicket ticket;
};

class ReplicaPicker {
 public:
  // How much cheaper candidate B must be to be taken over A.
  static constexpr double kTolerance = 1.5;
  // A degraded replica's weight as a candidate for primaries.
  static constexpr double kDegradedWeight = CircuitBreaker::kMinWeight;
  // A key's losses past the give-up point on a replica count once per
  // window (the default ejection window).
  static constexpr absl::Duration kSlowKeyWindow = absl::Seconds(10);

  // REQUIRES: !breakers.empty(); loads.size() == breakers.size(); no null
  // entries; max_ejected_share in [0, 1].
  ReplicaPicker(absl::Span<CircuitBreaker* const> breakers,
                absl::Span<ReplicaLoad* const> loads, double max_ejected_share);

  ReplicaPicker(const ReplicaPicker&) = delete;
  ReplicaPicker& operator=(const ReplicaPicker&) = delete;

  // Advances the rotation and chooses as above. nullopt when no replica
  // serves.
  std::optional<ReplicaPick> PickPrimary(absl::Time now);

  // The cheapest serving replica other than `exclude` that is neither
  // backed off nor degraded, among those whose last outcome was an answer
  // if any is; or nullopt. REQUIRES: exclude < size()
  std::optional<ReplicaPick> PickAlternate(size_t exclude, absl::Time now);

  // True when PickAlternate(exclude, now) would succeed if nothing else
  // changed in between; takes no ticket.
  // REQUIRES: exclude < size()
  bool HasAlternate(size_t exclude, absl::Time now) const;

  // True while `replica` is degraded (above). REQUIRES: replica < size()
  bool Degraded(size_t replica) const {
    return degraded_[replica].load(std::memory_order_relaxed);
  }

  // Outcome reports for a ticket of `replica`'s (see CircuitBreaker).
  void OnSuccess(size_t replica, const CircuitTicket& ticket, absl::Time now);
  void OnFailure(size_t replica, const CircuitTicket& ticket, absl::Time now);
  void OnCancel(size_t replica, const CircuitTicket& ticket);
  // An attempt that lost its race after running past the read's give-up
  // point (ReadDecision), for the read of `key` (its path, hashed; 0 for
  // none): OnFailure the first time that key loses so on `replica` within
  // kSlowKeyWindow; after that OnCancel if the replica has answered any
  // read since that loss (SlowKeys: one slow key must not eject a replica
  // that answers every other key), OnFailure if it has answered nothing (a
  // hung replica asked for one key only). True when it counted as a
  // failure.
  bool OnLostPastGiveUp(size_t replica, const CircuitTicket& ticket,
                        uint64_t key, absl::Time now);

  // A replica that wants a probe, with its probe ticket; nullopt if none.
  std::optional<ReplicaPick> TakeProbe(absl::Time now);
  // The earliest time a replica will want a probe (now or earlier when
  // one does; InfiniteFuture when none is ejected).
  absl::Time NextProbeDue(absl::Time now) const;

  // `replica` asked to be left alone until `until` (see Back-off above);
  // a later time than one already set extends it, an earlier one does not
  // shorten it. Returns the end in force before the call (InfinitePast
  // when it was never backed off): at or before the caller's now, this
  // call began a back-off. REQUIRES: replica < size()
  absl::Time BackOff(size_t replica, absl::Time until);
  // True while `replica` is backed off at `now`.
  bool BackedOff(size_t replica, absl::Time now) const;
  // When `replica`'s back-off ends (ended), or InfinitePast when it was
  // never backed off. REQUIRES: replica < size()
  absl::Time BackedOffUntil(size_t replica) const;

  // No scan returns `replica` from now on; attempts already on it go on.
  // REQUIRES: replica < size()
  void Retire(size_t replica);

  size_t size() const { return breakers_.size(); }
  CircuitBreaker& breaker(size_t replica) const { return *breakers_[replica]; }
  ReplicaLoad& load(size_t replica) const { return *loads_[replica]; }

 private:
  bool Retired(size_t replica) const {
    return retired_[replica].load(std::memory_order_acquire);
  }
  // Serving, not retired, and (while ramping up) drawn by its weight.
  bool Candidate(size_t replica, absl::Time now);
  // Some serving replica is not backed off; true whenever none is backed
  // off (what PickPrimary needs to know, without asking the breakers).
  bool AnyServingNotBackedOff(absl::Time now) const;
  // A number in [0, 1) from the draw sequence.
  double Draw();
  void MaybeEject(size_t replica, absl::Time now);
  // Clears `replica`'s degraded flag once it no longer wants ejection.
  void RecheckDegraded(size_t replica, absl::Time now);
  // Serving, not retired, neither backed off nor degraded.
  bool AlternateCandidate(size_t replica, absl::Time now) const;

  const std::vector<CircuitBreaker*> breakers_;
  const std::vector<ReplicaLoad*> loads_;
  const double max_ejected_share_;
  const std::unique_ptr<std::atomic<bool>[]> retired_;  // by replica
  // Back-off ends, in nanoseconds since the epoch, by replica.
  const std::unique_ptr<std::atomic<int64_t>[]> backed_off_until_;
  const std::unique_ptr<std::atomic<bool>[]> degraded_;  // by replica
  // By replica: its last outcome reported was a success (none yet: false).
  const std::unique_ptr<std::atomic<bool>[]> answered_;
  // By replica: when it last answered, in nanoseconds since the epoch.
  const std::unique_ptr<std::atomic<int64_t>[]> last_answer_;
  std::atomic<uint64_t> next_start_{0};
  std::atomic<uint64_t> draws_{0};
  Mutex eject_mu_;  // one ejection decision at a time in the set
  SlowKeys slow_keys_{kSlowKeyWindow};
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_HEALTH_REPLICA_PICKER_H_
