// The fanout scenario's parts (README.md, "--scenario=fanout") and what
// they share. Each part prints its JSON lines as results come in and
// returns the curves it plots.
//
//   batches       per batch size, arms one after the other on fresh
//                 processes: no_hedge, hedged, auto (sidecars, ReadMany),
//                 gateway (with --peer_gateway, parallel HTTP GETs)
//   per_key_cost  one sidecar, 100-key ReadMany against 100 concurrent
//                 Read calls on the same channel, in alternating rounds
//   hot_keys      Zipf-distributed keys from concurrent readers, a sidecar
//                 without and with --coalesce
//
// Thread safety: each part blocks the calling thread for its whole run.

#ifndef TAILGATE_EXPERIMENT_SCENARIOS_FANOUT_PARTS_H_
#define TAILGATE_EXPERIMENT_SCENARIOS_FANOUT_PARTS_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "experiment/config/experiment_config.h"
#include "experiment/load/batch_target.h"
#include "experiment/replicas/replica_pair.h"
#include "experiment/report/plots.h"

namespace tailgate::experiment {

// Reads of one batch at once, in every arm: a 1000-key batch runs in ten
// waves' worth of slots. Below the sidecar's and the gateway's default
// --max_requests (128), so that neither refuses a read.
inline constexpr int kFanoutInFlight = 100;
inline constexpr absl::Duration kFanoutBatchDeadline = absl::Seconds(30);
// Unmeasured batches of fast keys through each arm's own target first, so
// that every connection a full batch needs is open.
inline constexpr int kFanoutWarmupBatches = 2;

struct FanoutRun {
  const ExperimentConfig& config;
  const std::string& tailgate;
  ReplicaPair& replicas;
};

// What a series of batches measured.
struct BatchSeries {
  std::vector<absl::Duration> batch_latencies;  // ascending once Sort()ed
  std::vector<absl::Duration> key_latencies;    // each from its batch start
  int64_t keys = 0;
  int64_t item_attempts = 0;  // from the answers' traces (gRPC)
  void Sort();
};

// Runs `batches` batches through `target`, one after another, batch i
// reading `paths_of(i)`. An error when any key failed (a wrong answer is
// a bug, never a sample).
absl::StatusOr<BatchSeries> RunBatchSeries(
    BatchTarget& target, const std::string& label, int64_t batches,
    const std::function<std::vector<std::string>(int64_t)>& paths_of);

// kFanoutWarmupBatches batches of `keys` fast keys (GET /warmup?n=N).
absl::Status WarmUpTarget(BatchTarget& target, int keys);

// An insecure channel to a sidecar's read address, connected.
absl::StatusOr<std::shared_ptr<grpc::Channel>> ConnectChannel(
    const std::string& address);

absl::StatusOr<std::vector<CdfSeries>> RunFanoutBatches(const FanoutRun& run,
                                                        int keys);
absl::StatusOr<std::vector<CdfSeries>> RunFanoutPerKeyCost(
    const FanoutRun& run);
absl::StatusOr<std::vector<CdfSeries>> RunFanoutHotKeys(const FanoutRun& run);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_SCENARIOS_FANOUT_PARTS_H_
