// Workload: what the experiment's two replicas, A and B, do for each read,
// and the paths the clients send.
//
// Measured reads are GET /read?id=N. How long replica r in {A = 0, B = 1}
// waits before answering read N depends on the straggler mix:
//   kSeed        A waits 40 ms when N % 10 == 0, B when N % 10 == 1,
//                otherwise both wait 2 ms (the seed's experiment: with the
//                sidecar's primaries alternating A, B, A, ... 20 % of reads
//                meet a slow primary and have a fast alternate);
//   kSeedAnyPhase
//                A waits 40 ms when N % 10 is 0 or 1, B when it is 2 or 3,
//                otherwise both wait 2 ms: the seed's proportions whichever
//                replica is read N's primary. With primaries alternating,
//                20 % of reads meet a slow primary with a fast alternate
//                whether even reads start on A (N % 10 in {0, 3}) or on B
//                ({1, 2}), and so do 20 % of reads whose primaries are
//                chosen at random. Unlike kSeed, 20 % of reads have a fast
//                primary and a slow alternate. The open loop needs this
//                mix: there reads reach the sidecar out of order and a
//                refused read takes no turn in the rotation, which moves
//                kSeed's 20 % anywhere between 0 and 20 %, differently for
//                each policy;
//   kCorrelated  both wait 40 ms when N % 10 == 0, otherwise 2 ms (hedging
//                costs an attempt and cannot help);
//   kShifting    kSeed's stragglers over a base that shifts with the read's
//                phase, N / kShiftPhaseIds: 2 ms in phase 0, 8 ms in phase
//                1, 2 ms again in phase 2 (and so on, modulo 3). A fixed
//                hedge delay tuned for one phase is wrong for the other
//                (ShiftingReadId spreads a run over the three phases);
//   kFanout      A waits 40 ms when N % 100 == 0, B when N % 100 == 50,
//                otherwise both wait 2 ms (the fanout scenario: 2 % of keys
//                have one slow replica and a fast one, so whichever
//                replica is a read's primary, 1 % of reads meet a slow
//                primary whose alternate is fast, as in kSeedAnyPhase);
//   kNone        nobody waits (throughput).
// Warm-up reads, GET /warmup?n=N, wait 2 ms on both replicas whatever the
// mix (0 for kNone). Slow reads, GET /slow?n=N, wait 40 ms on both replicas
// whatever the mix (a flood that hedges cannot help: tenants). Hot-key
// reads, GET /hot?k=N, wait 2 ms on both replicas whatever the mix (0 for
// kNone): the fanout scenario's Zipf-distributed keys. Every answer is
// 200 with the body "replicated-value"; any other target gets a 404.
//
// Thread safety: pure functions.

#ifndef TAILGATE_EXPERIMENT_CONFIG_WORKLOAD_H_
#define TAILGATE_EXPERIMENT_CONFIG_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::experiment {

enum class StragglerMix {
  kSeed,
  kSeedAnyPhase,
  kCorrelated,
  kShifting,
  kFanout,
  kNone
};

inline constexpr absl::string_view kReplicaBody = "replicated-value";
inline constexpr absl::Duration kSlowDelay = absl::Milliseconds(40);
inline constexpr absl::Duration kFastDelay = absl::Milliseconds(2);
inline constexpr absl::Duration kShiftedDelay = absl::Milliseconds(8);
inline constexpr uint64_t kShiftPhaseIds = 1'000'000;

// The id of the `index`-th of `count` reads of a kShifting run: the run's
// thirds fall in phases 0, 1 and 2, and the id keeps the index's last
// digit, so that the stragglers and the primaries' rotation line up as in
// kSeed. REQUIRES: index < count <= 3 * (kShiftPhaseIds - 10).
uint64_t ShiftingReadId(int64_t index, int64_t count);

enum class ReplicaName { kA = 0, kB = 1 };

std::string ReadPath(uint64_t id);   // "/read?id=N"
std::string WarmupPath(uint64_t n);  // "/warmup?n=N"
std::string SlowPath(uint64_t n);    // "/slow?n=N"
std::string HotPath(uint64_t key);   // "/hot?k=N"

// How long `replica` waits before answering read `id`.
absl::Duration ReadDelay(StragglerMix mix, ReplicaName replica, uint64_t id);

// How long `replica` waits before answering `target` (the request target as
// received); nullopt for a target that is neither a read nor a warm-up.
std::optional<absl::Duration> DelayForTarget(StragglerMix mix,
                                             ReplicaName replica,
                                             absl::string_view target);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_CONFIG_WORKLOAD_H_
