// GrpcReadTarget: the steady reader's way through a tailgate sidecar, its
// HedgedRead service (Client::ReadAsync, gRPC's callback API).
//
// A read ends "" (200, the workload's body), the gRPC code's name
// ("DEADLINE_EXCEEDED", "UNAVAILABLE"...), "http_<status>" or kWrongBody.
//
// Thread safety: StartRead is safe from any thread; `done` runs on a gRPC
// thread. The client must outlive every read started.

#ifndef TAILGATE_EXPERIMENT_LOAD_GRPC_READ_TARGET_H_
#define TAILGATE_EXPERIMENT_LOAD_GRPC_READ_TARGET_H_

#include <string>

#include "absl/status/statusor.h"
#include "client/client.h"
#include "experiment/load/steady_reads.h"

namespace tailgate::experiment {

class GrpcReadTarget : public ReadTarget {
 public:
  explicit GrpcReadTarget(Client& client) : client_(client) {}
  void StartRead(const std::string& path, absl::Duration deadline,
                 Done done) override;

 private:
  Client& client_;
};

// How a read through the sidecar ended, as above.
std::string GrpcReadError(const absl::StatusOr<ReadResponse>& result);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_GRPC_READ_TARGET_H_
