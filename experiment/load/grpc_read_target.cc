#include "experiment/load/grpc_read_target.h"

#include <utility>

#include "absl/status/status.h"

namespace tailgate::experiment {

std::string GrpcReadError(const absl::StatusOr<ReadResponse>& result) {
  if (!result.ok()) return absl::StatusCodeToString(result.status().code());
  return HttpAnswerError(result->status, result->body);
}

void GrpcReadTarget::StartRead(const std::string& path, absl::Duration deadline,
                               Done done) {
  ReadRequest request;
  request.path = path;
  request.deadline = deadline;
  client_.ReadAsync(request, [done = std::move(done)](
                                 absl::StatusOr<ReadResponse> result) mutable {
    std::move(done)(GrpcReadError(result));
  });
}

}  // namespace tailgate::experiment
