// The cost scenario's arms (cost_scenario.cc): starting a sidecar for a
// measurement, driving it with h2load, stopping it. Shared by the rounds
// and the creep runs (cost_creep.h).

#ifndef TAILGATE_EXPERIMENT_SCENARIOS_COST_ARMS_H_
#define TAILGATE_EXPERIMENT_SCENARIOS_COST_ARMS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/admin_client.h"
#include "experiment/config/experiment_config.h"
#include "experiment/load/h2load.h"
#include "experiment/replicas/nginx_replicas.h"
#include "tests/process/child_process.h"
#include "tests/process/tailgate_process.h"

namespace tailgate::experiment {

inline constexpr absl::Duration kCostWarmup = absl::Seconds(1);
// After each measured run: long enough for a sidecar that gives memory back
// when reads stop (tailgate trims after a second without reads) to do so.
inline constexpr absl::Duration kCostQuietWindow = absl::Seconds(3);

// kTailgate is read through --listen as served by default (the loop front),
// kGrpcFront through --listen served by the gRPC library alone
// (--listen_front=grpc), kHttpDoor through its plain-HTTP door
// (--http_listen), the others over HTTP/1.1.
enum class ArmKind { kDirect, kTailgate, kGrpcFront, kHttpDoor, kGateway };

const char* ArmName(ArmKind arm);

// A load: a fixed total rate over a few connections, or saturation.
struct Point {
  std::string name;  // "1000/s", "saturation"
  double rate = 0;   // 0: unpaced
  int connections = 1;
  int grpc_streams = 1;  // outstanding per connection on the gRPC door
};

// Each fixed rate of the config, then saturation (always last).
std::vector<Point> PointsFor(const ExperimentConfig& config);

// One sidecar (or none, for direct) started for one measurement.
struct RunningArm {
  std::unique_ptr<testing::TailgateProcess> tailgate;
  std::unique_ptr<AdminClient> admin;
  std::unique_ptr<testing::ChildProcess> gateway;
  pid_t pid = 0;  // 0 for direct
  std::string url;
  bool grpc = false;
};

struct Setup {
  std::string work_dir;
  std::string tailgate_binary;
  std::string gateway_binary;  // empty: no gateway arm
  std::vector<int> sidecar_cpus;
  std::vector<std::string> load_launcher;  // taskset for nginx and h2load
  const NginxReplicas* replicas = nullptr;
};

absl::StatusOr<RunningArm> StartArm(const Setup& setup, ArmKind kind);

// Stops a tailgate arm and checks its exit (the others stop with their
// RunningArm).
absl::Status StopArm(RunningArm& arm);

// One h2load run of `point`'s load through `arm` for `duration`.
absl::StatusOr<H2loadReport> RunH2load(const Setup& setup,
                                       const RunningArm& arm,
                                       const Point& point,
                                       absl::Duration duration);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_SCENARIOS_COST_ARMS_H_
