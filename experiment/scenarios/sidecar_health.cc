#include "experiment/scenarios/sidecar_health.h"

#include <curl/curl.h>

#include <chrono>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "experiment/config/workload.h"
#include "experiment/load/read_outcome.h"

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kProbeDeadline = absl::Seconds(1);
constexpr absl::Duration kProbeInterval = absl::Milliseconds(250);
constexpr long kHealthzTimeoutMs = 2000;

size_t DiscardBody(char*, size_t size, size_t count, void*) noexcept {
  return size * count;
}

// The HTTP status of GET http://127.0.0.1:port/path; 0 without an answer.
long HttpGetStatus(int port, absl::string_view path) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return 0;
  const std::string url = absl::StrCat("http://127.0.0.1:", port, path);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, kHealthzTimeoutMs);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &DiscardBody);
  long status = 0;
  if (curl_easy_perform(curl) == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  }
  curl_easy_cleanup(curl);
  return status;
}

ReadRequest ProbeRequest() {
  ReadRequest request;
  request.path = ReadPath(0);
  request.deadline = kProbeDeadline;
  return request;
}

// Empty when one read on a new connection to the sidecar is ok.
std::string NewChannelFailure(const std::string& address) {
  ClientOptions options;
  options.connect_timeout = kProbeDeadline;
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Connect(address, options);
  if (!client.ok()) return client.status().ToString();
  const ReadRequest request = ProbeRequest();
  const absl::StatusOr<ReadResponse> response = (*client)->Read(request);
  if (Classify(response) == ReadOutcome::kOk) return "";
  return DescribeFailure(request.path, response);
}

}  // namespace

SidecarHealth CheckSidecarHealth(SidecarSession& session,
                                 absl::Duration limit) {
  const auto start = std::chrono::steady_clock::now();
  SidecarHealth health;
  health.healthz_status =
      HttpGetStatus(session.process().metrics_port(), "/healthz");
  health.new_channel_failure =
      NewChannelFailure(session.process().grpc_address());
  const ReadRequest request = ProbeRequest();
  while (Since(start) < limit) {
    ++health.probe_reads;
    const absl::StatusOr<ReadResponse> response =
        session.client().Read(request);
    if (Classify(response) == ReadOutcome::kOk) {
      health.recovery = Since(start);
      break;
    }
    if (health.probe_reads == 1) {
      health.first_probe_failure = DescribeFailure(request.path, response);
    }
    absl::SleepFor(kProbeInterval);
  }
  return health;
}

}  // namespace tailgate::experiment
