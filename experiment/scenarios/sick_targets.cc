#include "experiment/scenarios/sick_targets.h"

#include <signal.h>

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/client.h"
#include "experiment/load/grpc_read_target.h"
#include "experiment/load/http_read_target.h"
#include "experiment/measure/gateway_metrics.h"
#include "experiment/measure/http_get.h"
#include "experiment/measure/prometheus_text.h"
#include "tests/process/child_process.h"
#include "tests/process/tailgate_process.h"
#include "tests/replica/silent_listener.h"

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kConnectTimeout = absl::Seconds(5);
constexpr absl::Duration kStartTimeout = absl::Seconds(10);
constexpr absl::Duration kStopTimeout = absl::Seconds(10);
constexpr absl::Duration kScrapeTimeout = absl::Seconds(2);

class TailgateTarget : public SickTargetProcess {
 public:
  static absl::StatusOr<std::unique_ptr<SickTargetProcess>> Start(
      const SickTargetSetup& setup, const SickReplicaSet& replicas) {
    absl::StatusOr<std::unique_ptr<testing::TailgateProcess>> process =
        testing::TailgateProcess::Start(setup.tailgate_binary,
                                        {"--backends=" + replicas.backends()});
    if (!process.ok()) return process.status();
    ClientOptions options;
    options.connect_timeout = kConnectTimeout;
    absl::StatusOr<std::unique_ptr<Client>> client =
        Client::Connect((*process)->grpc_address(), options);
    if (!client.ok()) return client.status();
    return std::unique_ptr<SickTargetProcess>(new TailgateTarget(
        *std::move(process), *std::move(client), replicas.urls()));
  }

  ReadTarget& reads() override { return reads_; }

  absl::StatusOr<TargetCounters> ReadCounters() override {
    absl::StatusOr<std::string> text =
        HttpGetBody(metrics_url_, kScrapeTimeout);
    if (!text.ok()) return text.status();
    TargetCounters counters;
    for (const std::string& url : replica_urls_) {
      const std::string replica = absl::StrCat("replica=\"", url, "\"");
      counters.primaries.push_back(SumSamplesWithLabels(
          *text, "tailgate_attempts_total", {replica, "kind=\"primary\""}));
    }
    counters.attempts = SumSamples(*text, "tailgate_attempts_total");
    counters.requests = SumSamples(*text, "tailgate_requests_total");
    return counters;
  }

  absl::Status Stop() override {
    client_.reset();
    process_->Signal(SIGTERM);
    const std::optional<int> code = process_->WaitForExit(kStopTimeout);
    if (code == 0) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(
        "tailgate did not exit 0 within ", absl::FormatDuration(kStopTimeout),
        "; its stderr:\n", process_->stderr_text()));
  }

 private:
  TailgateTarget(std::unique_ptr<testing::TailgateProcess> process,
                 std::unique_ptr<Client> client,
                 std::vector<std::string> replica_urls)
      : metrics_url_(absl::StrCat("http://127.0.0.1:", process->metrics_port(),
                                  "/metrics")),
        replica_urls_(std::move(replica_urls)),
        process_(std::move(process)),
        client_(std::move(client)),
        reads_(*client_) {}

  const std::string metrics_url_;
  const std::vector<std::string> replica_urls_;
  // Declared before the client so that it is destroyed after it.
  std::unique_ptr<testing::TailgateProcess> process_;
  std::unique_ptr<Client> client_;
  GrpcReadTarget reads_;
};

class GatewayTarget : public SickTargetProcess {
 public:
  static absl::StatusOr<std::unique_ptr<SickTargetProcess>> Start(
      const SickTargetSetup& setup, const SickReplicaSet& replicas) {
    absl::StatusOr<int> port = testing::UnusedLoopbackPort();
    if (!port.ok()) return port.status();
    absl::StatusOr<int> admin_port = testing::UnusedLoopbackPort();
    if (!admin_port.ok()) return admin_port.status();
    const std::string log = setup.work_dir + "/gateway.log";
    absl::StatusOr<std::unique_ptr<testing::ChildProcess>> gateway =
        testing::ChildProcess::Start(testing::LoggedTo(
            {setup.gateway_binary, "-backends", replicas.backends(), "-listen",
             absl::StrCat("127.0.0.1:", *port), "-admin",
             absl::StrCat("127.0.0.1:", *admin_port)},
            log));
    if (!gateway.ok()) return gateway.status();
    if (!testing::WaitForPort(*port, kStartTimeout) ||
        !testing::WaitForPort(*admin_port, kStartTimeout)) {
      return absl::UnavailableError(absl::StrCat("the gateway did not listen: ",
                                                 testing::ReadWholeFile(log)));
    }
    absl::StatusOr<std::unique_ptr<HttpReadTarget>> reads =
        HttpReadTarget::Start(absl::StrCat("http://127.0.0.1:", *port));
    if (!reads.ok()) return reads.status();
    return std::unique_ptr<SickTargetProcess>(new GatewayTarget(
        *std::move(gateway), *std::move(reads),
        absl::StrCat("http://127.0.0.1:", *admin_port, "/metrics"), replicas));
  }

  ReadTarget& reads() override { return *reads_; }

  absl::StatusOr<TargetCounters> ReadCounters() override {
    absl::StatusOr<std::string> json =
        HttpGetBody(metrics_url_, kScrapeTimeout);
    if (!json.ok()) return json.status();
    absl::StatusOr<GatewayCounters> gateway = ParseGatewayMetrics(*json);
    if (!gateway.ok()) return gateway.status();
    TargetCounters counters;
    for (int64_t received : replicas_.RequestsReceived()) {
      counters.primaries.push_back(static_cast<double>(received));
    }
    counters.attempts = static_cast<double>(gateway->attempts);
    counters.requests = static_cast<double>(gateway->requests);
    return counters;
  }

  absl::Status Stop() override {
    reads_.reset();
    const int code = gateway_->Stop();
    if (code == 0) return absl::OkStatus();
    return absl::InternalError(
        absl::StrCat("the gateway exited with ", code, " when stopped"));
  }

 private:
  GatewayTarget(std::unique_ptr<testing::ChildProcess> gateway,
                std::unique_ptr<HttpReadTarget> reads, std::string metrics_url,
                const SickReplicaSet& replicas)
      : metrics_url_(std::move(metrics_url)),
        replicas_(replicas),
        gateway_(std::move(gateway)),
        reads_(std::move(reads)) {}

  const std::string metrics_url_;
  const SickReplicaSet& replicas_;
  std::unique_ptr<testing::ChildProcess> gateway_;
  std::unique_ptr<HttpReadTarget> reads_;  // null once stopped
};

}  // namespace

const char* SickTargetName(SickTarget target) {
  switch (target) {
    case SickTarget::kTailgate:
      return "tailgate";
    case SickTarget::kGateway:
      return "gateway";
  }
  return "?";
}

absl::StatusOr<std::unique_ptr<SickTargetProcess>> StartSickTarget(
    SickTarget target, const SickTargetSetup& setup,
    const SickReplicaSet& replicas) {
  switch (target) {
    case SickTarget::kTailgate:
      return TailgateTarget::Start(setup, replicas);
    case SickTarget::kGateway:
      return GatewayTarget::Start(setup, replicas);
  }
  return absl::InternalError("unknown target");
}

}  // namespace tailgate::experiment
