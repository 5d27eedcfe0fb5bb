// The gRPC plumbing shared by Client and AdminClient: opening the channel,
// setting a call's deadline, carrying a gRPC status over into
// absl::Status, and reading a proto Duration. Internal to //client.
//
// Thread safety: free functions without shared state.

#ifndef TAILGATE_CLIENT_SIDECAR_CHANNEL_H_
#define TAILGATE_CLIENT_SIDECAR_CHANNEL_H_

#include <google/protobuf/duration.pb.h>
#include <grpcpp/grpcpp.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/client.h"

namespace tailgate::client_internal {

// An insecure channel to `target` configured by `options` (see
// Client::Connect for the errors).
absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenSidecarChannel(
    absl::string_view target, const ClientOptions& options);

// Sets `context`'s deadline `timeout` from now; absl::InfiniteDuration()
// leaves the call without one.
void SetTimeout(grpc::ClientContext& context, absl::Duration timeout);

// The same code and message.
absl::Status FromGrpcStatus(const grpc::Status& status);

absl::Duration FromProtoDuration(const google::protobuf::Duration& proto);

}  // namespace tailgate::client_internal

#endif  // TAILGATE_CLIENT_SIDECAR_CHANNEL_H_
