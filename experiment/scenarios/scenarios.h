// The experiment's scenarios (README.md describes each). Every scenario
// starts its own embedded replicas and a fresh sidecar per policy and
// measurement, prints its JSON lines on stdout as results come in, notes
// its progress on stderr, and draws its plots when config.plot_dir is set.
//
// Thread safety: each blocks the calling thread for the whole run.

#ifndef TAILGATE_EXPERIMENT_SCENARIOS_SCENARIOS_H_
#define TAILGATE_EXPERIMENT_SCENARIOS_SCENARIOS_H_

#include <string>

#include "absl/status/status.h"
#include "experiment/config/experiment_config.h"

namespace tailgate::experiment {

// seed, correlated: sequential closed-loop reads, baseline vs hedged.
absl::Status RunStragglerScenario(const ExperimentConfig& config,
                                  const std::string& tailgate);

// open_loop: fixed-rate sends at one or more offered loads.
absl::Status RunOpenLoopScenario(const ExperimentConfig& config,
                                 const std::string& tailgate);

// throughput: saturation through the sidecar vs straight to the replicas.
absl::Status RunThroughputScenario(const ExperimentConfig& config,
                                   const std::string& tailgate);

// chaos: steady reads while replica A is killed and restarted; fails when
// any read fails.
absl::Status RunChaosScenario(const ExperimentConfig& config,
                              const std::string& tailgate);

// overload: quiet, far above capacity, quiet again, on one sidecar.
absl::Status RunOverloadScenario(const ExperimentConfig& config,
                                 const std::string& tailgate);

// tenants: a well-behaved tenant alone, then beside a tenant flooding slow
// reads, with and without per-tenant shares.
absl::Status RunTenantsScenario(const ExperimentConfig& config,
                                const std::string& tailgate);

// cost: what a read costs through tailgate (and the Go gateway, with
// --peer_gateway) against nginx direct, from an external load generator.
absl::Status RunCostScenario(const ExperimentConfig& config,
                             const std::string& tailgate);

// sick: what one sick replica among healthy ones costs a steady reader,
// through a default tailgate (and the Go gateway, with --peer_gateway).
// Failed reads are figures, not errors of the run.
absl::Status RunSickScenario(const ExperimentConfig& config,
                             const std::string& tailgate);

// fanout: batches of keys with a few stragglers, without and with per-key
// hedging (and through the Go gateway, with --peer_gateway); a batch's
// CPU per key against separate Read calls; hot keys with and without
// coalescing.
absl::Status RunFanoutScenario(const ExperimentConfig& config,
                               const std::string& tailgate);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_SCENARIOS_SCENARIOS_H_
