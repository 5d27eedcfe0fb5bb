// absl::Status -> grpc::Status. The canonical codes are the same numbers in
// both, so the mapping is 1:1 and the message is kept. The engine's
// messages never carry transport error text (see engine.h), so nothing is
// filtered here.
//
// Thread safety: a pure function.

#ifndef TAILGATE_SERVER_GRPC_GRPC_STATUS_H_
#define TAILGATE_SERVER_GRPC_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace tailgate::server {

grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_GRPC_GRPC_STATUS_H_
