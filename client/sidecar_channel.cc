#include "client/sidecar_channel.h"

#include <chrono>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tailgate::client_internal {

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenSidecarChannel(
    absl::string_view target, const ClientOptions& options) {
  if (absl::StripAsciiWhitespace(target).empty()) {
    return absl::InvalidArgumentError(
        "target must be host:port or unix:/path, got an empty string");
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  if (options.own_connection) {
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  }
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
      std::string(target), grpc::InsecureChannelCredentials(), args);
  if (options.connect_timeout > absl::ZeroDuration()) {
    const auto deadline = std::chrono::system_clock::now() +
                          absl::ToChronoNanoseconds(options.connect_timeout);
    if (!channel->WaitForConnected(deadline)) {
      return absl::UnavailableError(
          absl::StrCat("could not connect to ", target, " within ",
                       absl::FormatDuration(options.connect_timeout)));
    }
  }
  return channel;
}

void SetTimeout(grpc::ClientContext& context, absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) return;
  context.set_deadline(std::chrono::system_clock::now() +
                       absl::ToChronoNanoseconds(timeout));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  // grpc::StatusCode and absl::StatusCode share the canonical numbering.
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

absl::Duration FromProtoDuration(const google::protobuf::Duration& proto) {
  return absl::Seconds(proto.seconds()) + absl::Nanoseconds(proto.nanos());
}

}  // namespace tailgate::client_internal
