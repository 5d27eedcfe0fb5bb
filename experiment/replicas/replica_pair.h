// ReplicaPair: the experiment's two embedded loopback HTTP replicas, A and
// B (//tests/replica), answering as the workload says (workload.h). Each
// replica's delay is a timer on its own event loop, so any number of reads
// can wait at once.
//
// Thread safety: safe from any thread; the handlers run on the replicas'
// loop threads.

#ifndef TAILGATE_EXPERIMENT_REPLICAS_REPLICA_PAIR_H_
#define TAILGATE_EXPERIMENT_REPLICAS_REPLICA_PAIR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "experiment/config/workload.h"
#include "tests/replica/replica.h"

namespace tailgate::experiment {

// One replica answering as `replica` of `mix`, on 127.0.0.1:`port` (0
// picks a free port; a port of a destroyed replica may be reused). Each
// hot-key read it receives (GET /hot?k=N) adds one to `hot_reads`, when
// given; it must outlive the replica.
absl::StatusOr<std::unique_ptr<testing::Replica>> StartWorkloadReplica(
    StragglerMix mix, ReplicaName replica, int port = 0,
    std::atomic<int64_t>* hot_reads = nullptr);

class ReplicaPair {
 public:
  static absl::StatusOr<std::unique_ptr<ReplicaPair>> Start(StragglerMix mix);

  // "URL_A,URL_B": the sidecar's --backends, A first, so that the
  // sidecar's first primary is A.
  std::string backends() const;
  std::string url(ReplicaName replica) const;
  // Hot-key reads (GET /hot?k=N) A and B have received so far, together:
  // the fanout scenario's upstream fetches (health probes and other
  // targets not counted).
  int64_t hot_reads_received() const;

 private:
  ReplicaPair(std::unique_ptr<std::atomic<int64_t>> hot_reads,
              std::unique_ptr<testing::Replica> a,
              std::unique_ptr<testing::Replica> b)
      : hot_reads_(std::move(hot_reads)), a_(std::move(a)), b_(std::move(b)) {}

  // Declared first: destroyed after the replicas that count into it.
  const std::unique_ptr<std::atomic<int64_t>> hot_reads_;
  const std::unique_ptr<testing::Replica> a_;
  const std::unique_ptr<testing::Replica> b_;
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_REPLICAS_REPLICA_PAIR_H_
