// SickReplicaSet: the sick scenario's N embedded loopback replicas
// (//tests/replica), replica 0 .. N-2 healthy, the last one sick in one of
// the SickKinds. Every reply's delay and every hang is the replica's own
// doing on its event loop (a timer, or an answer never written), never a
// sleep, so any number of reads can wait at once.
//
// Example:
//   absl::StatusOr<std::unique_ptr<SickReplicaSet>> replicas =
//       SickReplicaSet::Start(SickKind::kHeal, 3);
//   ... start a sidecar with --backends=(*replicas)->backends() ...
//   (*replicas)->StartCase();  // the heal clock starts now
//   std::vector<int64_t> received = (*replicas)->RequestsReceived();
//
// Thread safety: every member function is safe from any thread; the
// handlers run on the replicas' loop threads.

#ifndef TAILGATE_EXPERIMENT_REPLICAS_SICK_REPLICAS_H_
#define TAILGATE_EXPERIMENT_REPLICAS_SICK_REPLICAS_H_

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiment/config/sick_config.h"
#include "tests/replica/replica.h"

namespace tailgate::experiment {

// A healthy replica's delay before its 200 answer.
inline constexpr absl::Duration kHealthyReplicaDelay = absl::Milliseconds(1);

// How the sick replica answers the request it received `request_id`-th (0,
// 1, 2... in order of arrival), `healed` saying whether a heal replica's
// hang is over. Every answer that is written is 200 "replicated-value".
testing::ReplicaResponse SickResponse(SickKind kind, uint64_t request_id,
                                      bool healed);

class SickReplicaSet {
 public:
  // REQUIRES: replicas >= 2.
  static absl::StatusOr<std::unique_ptr<SickReplicaSet>> Start(SickKind kind,
                                                               int replicas);

  // "URL_0,...,URL_N-1": a sidecar's --backends, the sick replica last.
  std::string backends() const;
  std::vector<std::string> urls() const;
  int size() const { return static_cast<int>(replicas_.size()); }

  // The case starts now: a heal replica heals kHealAfter from now (until
  // then, and before any call, it hangs).
  void StartCase();

  // Requests each replica has received so far, in backends() order.
  std::vector<int64_t> RequestsReceived() const;

 private:
  SickReplicaSet() = default;

  // Steady-clock nanoseconds from which the heal replica answers; the
  // loop thread of the sick replica reads it, StartCase writes it.
  std::atomic<int64_t> heal_at_ns_{std::numeric_limits<int64_t>::max()};
  // Constant after Start; destroyed (loops stopped) before heal_at_ns_.
  std::vector<std::unique_ptr<testing::Replica>> replicas_;
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_REPLICAS_SICK_REPLICAS_H_
