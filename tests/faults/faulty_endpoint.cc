#include "tests/faults/faulty_endpoint.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "tests/replica/silent_listener.h"

namespace tailgate::testing {

absl::StatusOr<std::unique_ptr<FaultyEndpoint>> FaultyEndpoint::Start(
    Fault fault) {
  if (fault == Fault::kRefuse) {
    absl::StatusOr<int> port = UnusedLoopbackPort();
    if (!port.ok()) return port.status();
    return std::unique_ptr<FaultyEndpoint>(new FaultyEndpoint(*port, nullptr));
  }
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      Replica::Start(FaultHandler(fault));
  if (!replica.ok()) return replica.status();
  const int port = (*replica)->port();
  return std::unique_ptr<FaultyEndpoint>(
      new FaultyEndpoint(port, *std::move(replica)));
}

FaultyEndpoint::FaultyEndpoint(int port, std::unique_ptr<Replica> replica)
    : port_(port),
      url_(absl::StrCat("http://127.0.0.1:", port)),
      replica_(std::move(replica)) {}

absl::Status FaultyEndpoint::Heal(Handler handler) {
  if (replica_ != nullptr) {
    replica_->SetHandler(std::move(handler));
    return absl::OkStatus();
  }
  ReplicaOptions options;
  options.port = port_;
  absl::StatusOr<std::unique_ptr<Replica>> replica =
      Replica::Start(std::move(handler), options);
  if (!replica.ok()) return replica.status();
  replica_ = *std::move(replica);
  return absl::OkStatus();
}

}  // namespace tailgate::testing
