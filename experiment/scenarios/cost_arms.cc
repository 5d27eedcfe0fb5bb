#include "experiment/scenarios/cost_arms.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/client.h"
#include "experiment/report/report.h"
#include "tests/replica/silent_listener.h"

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(10);
// Both sidecars' admission limits sit above the saturating load (32
// connections × 4 streams), so that they measure the path, not the gate.
constexpr int kMaxRequests = 256;
constexpr int kMaxAttempts = 320;

}  // namespace

const char* ArmName(ArmKind arm) {
  switch (arm) {
    case ArmKind::kDirect:
      return "direct";
    case ArmKind::kTailgate:
      return "tailgate";
    case ArmKind::kGrpcFront:
      return "grpc_front";
    case ArmKind::kHttpDoor:
      return "http_door";
    case ArmKind::kGateway:
      return "gateway";
  }
  return "?";
}

std::vector<Point> PointsFor(const ExperimentConfig& config) {
  std::vector<Point> points;
  for (double rate : config.rates) {
    // 4 connections up to 1000 reads/s, 8 from 4000 (h2load paces each
    // connection on its own timer, so each must stay well under 1000/s).
    const int connections = std::clamp(static_cast<int>(rate / 500), 4, 8);
    points.push_back({absl::StrCat(rate, "/s"), rate, connections, 1});
  }
  points.push_back({"saturation", 0, config.concurrency, 4});
  return points;
}

// A fresh tailgate with the arms' flags and `extra` ones, into `arm`.
absl::Status StartTailgate(const Setup& setup,
                           const std::vector<std::string>& extra,
                           RunningArm& arm) {
  std::vector<std::string> flags = {
      absl::StrCat("--backends=", setup.replicas->backends()),
      absl::StrCat("--max_requests=", kMaxRequests),
      absl::StrCat("--max_attempts=", kMaxAttempts)};
  if (!setup.sidecar_cpus.empty()) {
    flags.push_back(
        absl::StrCat("--cpus=", absl::StrJoin(setup.sidecar_cpus, ",")));
  }
  flags.insert(flags.end(), extra.begin(), extra.end());
  absl::StatusOr<std::unique_ptr<testing::TailgateProcess>> process =
      testing::TailgateProcess::Start(setup.tailgate_binary, flags);
  if (!process.ok()) return process.status();
  absl::StatusOr<std::unique_ptr<AdminClient>> admin =
      AdminClient::Connect((*process)->admin_address(), ClientOptions());
  if (!admin.ok()) return admin.status();
  arm.pid = (*process)->pid();
  arm.tailgate = *std::move(process);
  arm.admin = *std::move(admin);
  return absl::OkStatus();
}

absl::StatusOr<RunningArm> StartArm(const Setup& setup, ArmKind kind) {
  RunningArm arm;
  switch (kind) {
    case ArmKind::kDirect:
      arm.url = setup.replicas->url(0);
      return arm;
    case ArmKind::kTailgate:
    case ArmKind::kGrpcFront: {
      std::vector<std::string> front;
      if (kind == ArmKind::kGrpcFront) front.push_back("--listen_front=grpc");
      if (absl::Status s = StartTailgate(setup, front, arm); !s.ok()) return s;
      arm.url = absl::StrCat("http://", arm.tailgate->grpc_address(),
                             "/tailgate.v1.HedgedRead/Read");
      arm.grpc = true;
      return arm;
    }
    case ArmKind::kHttpDoor: {
      absl::StatusOr<int> port = testing::UnusedLoopbackPort();
      if (!port.ok()) return port.status();
      const std::string address = absl::StrCat("127.0.0.1:", *port);
      if (absl::Status s = StartTailgate(
              setup, {absl::StrCat("--http_listen=", address)}, arm);
          !s.ok()) {
        return s;
      }
      if (!testing::WaitForPort(*port, kStartTimeout)) {
        return absl::UnavailableError(absl::StrCat(
            "the ", ArmName(kind), " did not listen on ", address));
      }
      arm.url = absl::StrCat("http://", address, NginxReplicas::kPath);
      return arm;
    }
    case ArmKind::kGateway: {
      absl::StatusOr<int> port = testing::UnusedLoopbackPort();
      absl::StatusOr<int> admin_port = testing::UnusedLoopbackPort();
      if (!port.ok()) return port.status();
      if (!admin_port.ok()) return admin_port.status();
      std::vector<std::string> argv;
      if (!setup.sidecar_cpus.empty()) {
        argv = {"taskset", "-c", absl::StrJoin(setup.sidecar_cpus, ",")};
      }
      argv.insert(argv.end(), {setup.gateway_binary, "-backends",
                               setup.replicas->backends(), "-listen",
                               absl::StrCat("127.0.0.1:", *port), "-admin",
                               absl::StrCat("127.0.0.1:", *admin_port),
                               "-max-requests", absl::StrCat(kMaxRequests),
                               "-max-attempts", absl::StrCat(kMaxAttempts)});
      absl::StatusOr<std::unique_ptr<testing::ChildProcess>> gateway =
          testing::ChildProcess::Start(testing::LoggedTo(
              argv, absl::StrCat(setup.work_dir, "/gateway.log")));
      if (!gateway.ok()) return gateway.status();
      if (!testing::WaitForPort(*port, kStartTimeout)) {
        return absl::UnavailableError(absl::StrCat(
            "the gateway did not listen: ",
            testing::ReadWholeFile(setup.work_dir + "/gateway.log")));
      }
      // taskset execs the gateway: same pid.
      arm.pid = (*gateway)->pid();
      arm.url = absl::StrCat("http://127.0.0.1:", *port, NginxReplicas::kPath);
      arm.gateway = *std::move(gateway);
      return arm;
    }
  }
  return absl::InternalError("unknown arm");
}

absl::Status StopArm(RunningArm& arm) {
  if (arm.tailgate == nullptr) return absl::OkStatus();
  arm.admin.reset();
  arm.tailgate->Signal(SIGTERM);
  if (arm.tailgate->WaitForExit(absl::Seconds(10)) != 0) {
    return absl::InternalError(absl::StrCat("tailgate did not exit 0:\n",
                                            arm.tailgate->stderr_text()));
  }
  return absl::OkStatus();
}

absl::StatusOr<H2loadReport> RunH2load(const Setup& setup,
                                       const RunningArm& arm,
                                       const Point& point,
                                       absl::Duration duration) {
  H2loadRun run;
  run.url = arm.url;
  run.grpc = arm.grpc;
  run.grpc_body_file = setup.work_dir + "/read.bin";
  run.connections = point.connections;
  run.streams = arm.grpc ? point.grpc_streams : 1;
  run.total_rate = point.rate;
  run.duration = duration;
  std::vector<std::string> argv = setup.load_launcher;
  const std::vector<std::string> args = H2loadArgs(run);
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string out = setup.work_dir + "/h2load.out";
  std::remove(out.c_str());
  absl::StatusOr<std::unique_ptr<testing::ChildProcess>> h2load =
      testing::ChildProcess::Start(testing::LoggedTo(argv, out));
  if (!h2load.ok()) return h2load.status();
  const std::optional<int> code = (*h2load)->Wait(duration + absl::Seconds(30));
  const std::string text = testing::ReadWholeFile(out);
  if (code != 0) {
    return absl::UnavailableError(absl::StrCat(
        "h2load failed (", absl::StrJoin(argv, " "), "):\n", text));
  }
  return ParseH2loadReport(text);
}

}  // namespace tailgate::experiment
