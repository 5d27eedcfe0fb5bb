// Calls of the door's own services besides Read, served on the loop thread
// as Read is, from the same nghttp2 session: grpc.health.v1.Health Check
// (unary) and Watch (server streaming), and server reflection v1 and
// v1alpha (ServerReflectionInfo, a stream each way). The answers come from
// server/services; here they are framed, sent as the client takes them,
// and ended with trailers. See service_call.h for what a call may hold.

#include <event2/event.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/read/read_error.h"
#include "server/read_door/grpc_response.h"
#include "server/read_door/grpc_wire.h"
#include "server/read_door/read_door_impl.h"
#include "server/read_door/service_call.h"
#include "server/services/health_calls.h"
#include "server/services/reflection_calls.h"

namespace tailgate::server::read_door {
namespace {

using Method = ServiceCall::Method;

// What reflection lists: the services this door serves.
const std::vector<std::string>& ServedServices() {
  static const auto* const kServices = new std::vector<std::string>{
      "tailgate.v1.HedgedRead",
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
  };
  return *kServices;
}

// `message` with its gRPC prefix, into `out` (replacing what it held).
void Frame(absl::string_view message, std::string& out) {
  out.resize(kMessagePrefixBytes);
  PutMessagePrefix(static_cast<uint32_t>(message.size()), out.data());
  out.append(message.data(), message.size());
}

}  // namespace

std::optional<Method> ServiceCall::At(absl::string_view path) {
  if (path == "/grpc.health.v1.Health/Check") return Method::kHealthCheck;
  if (path == "/grpc.health.v1.Health/Watch") return Method::kHealthWatch;
  if (path == "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo" ||
      path ==
          "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo") {
    return Method::kReflection;
  }
  return std::nullopt;
}

bool ReadDoor::Impl::MakeServiceCall(Call* call, absl::string_view path) {
  if (options_.serving_state == nullptr) return false;
  const std::optional<Method> method = ServiceCall::At(path);
  if (!method.has_value()) return false;
  call->service = std::make_unique<ServiceCall>(ServiceCall{*method});
  return true;
}

void ReadDoor::Impl::ContinueServiceCall(Call* call, bool request_ended) {
  ServiceCall& service = *call->service;
  if (request_ended) service.request_ended = true;
  if (service.end.has_value()) return;
  if (call->refusal.ok() && !call->grpc_content_type) {
    call->http_status = 415;
    call->refusal =
        absl::InternalError("content-type must be application/grpc");
  }
  if (!call->refusal.ok()) {
    EndServiceCall(call, call->refusal);
    return;
  }
  if (stopping_ && service.method != Method::kHealthCheck) {
    EndServiceCall(call, ShuttingDownError().status);
    return;
  }
  if (service.method == Method::kReflection) {
    ServeReflection(call);
    return;
  }
  if (!service.request_ended) return;  // unary requests: the whole of it
  absl::StatusOr<absl::string_view> request = UnaryMessage(call->body);
  if (!request.ok()) {
    EndServiceCall(call, request.status());
    return;
  }
  const bool serving = options_.serving_state->serving();
  if (service.method == Method::kHealthCheck) {
    absl::StatusOr<std::string> answer =
        services::AnswerHealthCheck(*request, serving);
    ReleaseBody(call);
    if (!answer.ok()) {
      EndServiceCall(call, answer.status());
      return;
    }
    Frame(*answer, service.message);
    service.end = absl::OkStatus();
    SubmitServiceResponse(call);
    return;
  }
  absl::StatusOr<services::HealthWatchStart> watch =
      services::StartHealthWatch(*request, serving);
  ReleaseBody(call);
  if (!watch.ok()) {
    EndServiceCall(call, watch.status());
    return;
  }
  service.follows_serving = watch->follows_serving;
  service.latest = watch->first;
  service.pending = watch->first;
  watches_.insert(call);
  SubmitServiceResponse(call);
}

void ReadDoor::Impl::ServeReflection(Call* call) {
  ServiceCall& service = *call->service;
  if (service.message_sent < service.message.size()) {
    return;  // one answer at a time: the next request waits for this one
  }
  // The answer sent last is nghttp2's now.
  core_.ReleaseServiceAnswer(std::exchange(service.held_bytes, 0));
  std::string().swap(service.message);
  service.message_sent = 0;
  service.send_deadline = absl::InfiniteFuture();
  if (service.end.has_value()) return;
  const absl::string_view body = call->body;
  if (body.size() < kMessagePrefixBytes ||
      body.size() - kMessagePrefixBytes < MessageLength(body)) {
    // No whole request waits: the stream ends once the client's has.
    if (service.request_ended) {
      EndServiceCall(call, body.empty() ? absl::OkStatus()
                                        : absl::InternalError(
                                              "the request's last message is "
                                              "cut short"));
    }
    return;
  }
  if (body[0] != 0) {
    EndServiceCall(
        call, absl::UnimplementedError("compressed messages are not accepted "
                                       "(grpc-accept-encoding: identity)"));
    return;
  }
  const size_t length = MessageLength(body);
  absl::StatusOr<std::string> answer = services::AnswerReflection(
      body.substr(kMessagePrefixBytes, length), ServedServices());
  // The request is answered: its bytes go back to max_request_bytes.
  call->body.erase(0, kMessagePrefixBytes + length);
  CountRequestBytes(call, -static_cast<int64_t>(kMessagePrefixBytes + length));
  if (!answer.ok()) {
    EndServiceCall(call, answer.status());
    return;
  }
  const int64_t bytes =
      static_cast<int64_t>(kMessagePrefixBytes + answer->size());
  if (!core_.HoldServiceAnswer(bytes)) {
    EndServiceCall(call, core_.ServiceBufferFullError());
    return;
  }
  service.held_bytes = bytes;
  Frame(*answer, service.message);
  // Taken by nghttp2 within --send_timeout, or the stream is reset
  // (OnSendTimeout), as a Read's answer.
  service.send_deadline = absl::Now() + options_.send_timeout;
  if (!evtimer_pending(call->connection->send_timer, nullptr)) {
    const timeval timeout = absl::ToTimeval(options_.send_timeout);
    evtimer_add(call->connection->send_timer, &timeout);
  }
  if (!service.responding) {
    SubmitServiceResponse(call);
  } else {
    nghttp2_session_resume_data(call->connection->wire.session,
                                call->stream_id);
  }
}

void ReadDoor::Impl::SubmitServiceResponse(Call* call) {
  call->state = Call::State::kAnswering;
  call->service->responding = true;
  nghttp2_data_provider messages;
  messages.source.ptr = call;
  messages.read_callback = &Impl::ReadServiceMessages;
  if (SubmitResponseHeaders(call->connection->wire.session, call->stream_id,
                            messages) != 0) {
    nghttp2_submit_rst_stream(call->connection->wire.session, NGHTTP2_FLAG_NONE,
                              call->stream_id, NGHTTP2_INTERNAL_ERROR);
  }
}

void ReadDoor::Impl::EndServiceCall(Call* call, const absl::Status& status) {
  ServiceCall& service = *call->service;
  if (service.end.has_value()) return;  // the first end stands
  service.end = status;
  service.pending.reset();
  watches_.erase(call);
  // What the client sends from here on is not kept.
  ReleaseBody(call);
  if (call->refusal.ok() && !status.ok()) call->refusal = status;
  nghttp2_session* session = call->connection->wire.session;
  if (service.responding) {
    nghttp2_session_resume_data(session, call->stream_id);
    return;
  }
  service.responding = true;
  call->state = Call::State::kAnswering;
  if (SubmitTrailersOnly(session, call->stream_id, call->http_status, status) !=
      0) {
    nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, call->stream_id,
                              NGHTTP2_INTERNAL_ERROR);
  }
}

void ReadDoor::Impl::ReleaseServiceCall(Call* call) {
  watches_.erase(call);
  core_.ReleaseServiceAnswer(std::exchange(call->service->held_bytes, 0));
}

void ReadDoor::Impl::NextServiceMessage(Call* call) {
  ServiceCall& service = *call->service;
  switch (service.method) {
    case Method::kHealthCheck:
      return;  // its one answer was queued at once
    case Method::kHealthWatch:
      if (!service.pending.has_value()) return;
      Frame(services::HealthResponse(*service.pending), service.message);
      service.message_sent = 0;
      service.pending.reset();
      return;
    case Method::kReflection:
      ServeReflection(call);
      return;
  }
}

ssize_t ReadDoor::Impl::ReadServiceMessages(nghttp2_session* session,
                                            int32_t stream_id, uint8_t* buffer,
                                            size_t length, uint32_t* data_flags,
                                            nghttp2_data_source* source,
                                            void* user_data) noexcept {
  auto* connection = static_cast<Connection*>(user_data);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  auto* call = static_cast<Call*>(source->ptr);
  ServiceCall& service = *call->service;
  if (service.message_sent == service.message.size()) {
    self->NextServiceMessage(call);
  }
  const size_t left = service.message.size() - service.message_sent;
  if (left > 0) {
    const size_t n = std::min(length, left);
    std::memcpy(buffer, service.message.data() + service.message_sent, n);
    service.message_sent += n;
    // Done with it: the next, if one is ready (a reflection answer's held
    // bytes are released here, not when the client reads them).
    if (service.message_sent == service.message.size()) {
      self->NextServiceMessage(call);
    }
    return static_cast<ssize_t>(n);
  }
  if (!service.end.has_value()) return NGHTTP2_ERR_DEFERRED;
  *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
  if (SubmitTrailers(session, stream_id, *service.end) != 0) {
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // resets the stream
  }
  return 0;
}

void ReadDoor::Impl::PublishServing() {
  const services::HealthStatus now =
      services::StatusOf(options_.serving_state->serving());
  absl::flat_hash_set<Connection*> told;
  for (Call* call : watches_) {
    ServiceCall& service = *call->service;
    if (!service.follows_serving || service.latest == now) continue;
    // Replaces a status the client has not taken yet.
    service.latest = now;
    service.pending = now;
    nghttp2_session_resume_data(call->connection->wire.session,
                                call->stream_id);
    told.insert(call->connection);
  }
  for (Connection* connection : told) {
    if (connections_.contains(connection)) Flush(connection);
  }
}

void ReadDoor::Impl::FollowServing() {
  if (options_.serving_state == nullptr) return;
  serving_subscription_ = options_.serving_state->Subscribe([this](bool) {
    // Fails only once the loop has stopped: no Watch is left to tell then.
    loop_
        .RunOnLoop([this](event_base*) {
          door_thread_.AssertOnOwner();
          PublishServing();
        })
        .IgnoreError();
  });
}

void ReadDoor::Impl::EndServiceCalls(const absl::Status& status) {
  std::vector<Connection*> open;
  for (auto& [key, connection] : connections_) {
    for (Call* call : connection->calls) {
      if (call->service != nullptr) EndServiceCall(call, status);
    }
    open.push_back(key);
  }
  for (Connection* connection : open) {
    if (connections_.contains(connection)) Flush(connection);
  }
}

}  // namespace tailgate::server::read_door
