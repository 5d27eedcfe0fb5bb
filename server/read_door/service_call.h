// ServiceCall: what a call of one of the door's own services holds besides
// its Call (read_door_impl.h): grpc.health.v1.Health Check and Watch, and
// server reflection (ServerReflectionInfo, v1 and v1alpha). Their answers
// come from server/services; read_door_services.cc frames them.
//
// What one costs, bounded whatever the client does:
//   - its request bytes are the Call's `body`, counted against
//     max_request_bytes as a Read's are, at most a message prefix and
//     max_message_bytes not yet answered;
//   - one framed message at a time is being sent (`message`): a health
//     answer (7 bytes, inline), or one reflection answer, held against
//     --max_buffered_bytes (ReadCore::HoldServiceAnswer) until nghttp2 has
//     taken it, under the send timeout as a Read's answer is;
//   - a Watch keeps at most one status waiting behind it (`pending`): a
//     client that never reads gets the latest status, not every change.
// So an open Watch holds its Call, this struct and nghttp2's stream and
// data item: less than the kCallBytes it is counted for (read_door_impl.h).
//
// Thread safety: door thread only, as the Call.

#ifndef TAILGATE_SERVER_READ_DOOR_SERVICE_CALL_H_
#define TAILGATE_SERVER_READ_DOOR_SERVICE_CALL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/services/health_calls.h"

namespace tailgate::server::read_door {

struct ServiceCall {
  enum class Method { kHealthCheck, kHealthWatch, kReflection };

  // The method served at `path`, if the door serves it.
  static std::optional<Method> At(absl::string_view path);

  Method method;
  bool request_ended = false;
  // Response headers (with the message source) are submitted, or the
  // call was answered with trailers only.
  bool responding = false;
  // Set: the call ends with this status once `message` is sent.
  std::optional<absl::Status> end;
  // The framed message being sent, from message_sent on.
  std::string message;
  size_t message_sent = 0;
  // What HoldServiceAnswer reserved for `message` (reflection answers),
  // and when nghttp2 must have taken it (--send_timeout).
  int64_t held_bytes = 0;
  absl::Time send_deadline = absl::InfiniteFuture();
  // Watch: the last status queued, and the one waiting for `message` to
  // be sent; follows_serving for a service the sidecar reports.
  bool follows_serving = false;
  services::HealthStatus latest = services::HealthStatus::kServiceUnknown;
  std::optional<services::HealthStatus> pending;
};

}  // namespace tailgate::server::read_door

#endif  // TAILGATE_SERVER_READ_DOOR_SERVICE_CALL_H_
