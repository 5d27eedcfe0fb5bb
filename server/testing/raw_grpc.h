// Health checks and reflection queries for tests, without health.proto or
// reflection.proto: Debian ships neither, and a binary that links
// libgrpc++_reflection cannot also carry its own copy of reflection.proto.
// The few messages involved are encoded and decoded by hand.
//
// Thread safety: free functions; safe from any thread.

#ifndef TAILGATE_SERVER_TESTING_RAW_GRPC_H_
#define TAILGATE_SERVER_TESTING_RAW_GRPC_H_

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::server::testing {

// grpc.health.v1.HealthCheckResponse.ServingStatus values.
inline constexpr int kServing = 1;
inline constexpr int kNotServing = 2;

// grpc.health.v1.Health/Check for `service`: the serving status, or the
// call's error (NOT_FOUND for a service the health service does not know).
absl::StatusOr<int> HealthCheck(const std::shared_ptr<grpc::Channel>& channel,
                                const std::string& service);

// The service names listed by server reflection (list_services), of
// `version` "v1alpha" or "v1".
absl::StatusOr<std::vector<std::string>> ReflectionListServices(
    const std::shared_ptr<grpc::Channel>& channel,
    absl::string_view version = "v1alpha");

// A grpc.health.v1.Health/Watch stream: each Next() is the next serving
// status the server sends. Not thread-safe; one thread drives it.
class HealthWatch {
 public:
  HealthWatch(const std::shared_ptr<grpc::Channel>& channel,
              const std::string& service);
  ~HealthWatch();  // cancels the stream if it is still open
  HealthWatch(const HealthWatch&) = delete;
  HealthWatch& operator=(const HealthWatch&) = delete;

  // The next status, DEADLINE_EXCEEDED if none comes within `wait`, or
  // the stream's end (its gRPC status; OK ends are reported as ABORTED).
  absl::StatusOr<int> Next(absl::Duration wait);
  // Cancels the stream and waits for its end.
  void Cancel();

 private:
  absl::Status Finish();

  grpc::GenericStub stub_;
  grpc::ClientContext context_;
  grpc::CompletionQueue cq_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
  grpc::ByteBuffer response_;
  bool reading_ = false;   // a Read is outstanding
  bool ended_ = false;     // no more Read
  bool finished_ = false;  // Finish has run: end_ is the stream's status
  absl::Status end_;
};

}  // namespace tailgate::server::testing

#endif  // TAILGATE_SERVER_TESTING_RAW_GRPC_H_
