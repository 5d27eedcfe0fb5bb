// The cost scenario's creep runs (--creep_runs): whether a sidecar's memory
// grows from one saturating run to the next.

#ifndef TAILGATE_EXPERIMENT_SCENARIOS_COST_CREEP_H_
#define TAILGATE_EXPERIMENT_SCENARIOS_COST_CREEP_H_

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "experiment/scenarios/cost_arms.h"

namespace tailgate::experiment {

// Creep: `runs` saturating runs in a row on one sidecar, its memory read as
// each ends and after the quiet window that follows. A line per run, then
// one with the spread: a sidecar that keeps what a burst took grows from
// run to run.
absl::Status MeasureCreep(const Setup& setup, ArmKind kind, const Point& point,
                          int runs, absl::Duration duration);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_SCENARIOS_COST_CREEP_H_
