// Requests at the HTTP door: what is refused before a read is submitted
// (over the connection limit, shutting down, a method other than GET and
// HEAD, a connection that sent a NUL byte, a request http_mapping.h
// refuses, a body). See http_door_impl.h.

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/http_door/http_door_impl.h"

namespace tailgate::server::http_door {
namespace {

HttpMethod MethodOf(evhttp_request* request) {
  switch (evhttp_request_get_command(request)) {
    case EVHTTP_REQ_GET:
      return HttpMethod::kGet;
    case EVHTTP_REQ_HEAD:
      return HttpMethod::kHead;
    default:
      return HttpMethod::kOther;
  }
}

HttpRequestIn RequestIn(evhttp_request* request) {
  HttpRequestIn in;
  in.method = MethodOf(request);
  const char* uri = evhttp_request_get_uri(request);
  in.target = uri == nullptr ? "" : uri;
  const evkeyvalq* headers = evhttp_request_get_input_headers(request);
  for (const evkeyval* header = headers->tqh_first; header != nullptr;
       header = header->next.tqe_next) {
    in.headers.push_back({header->key, header->value});
  }
  return in;
}

}  // namespace

void HttpDoor::Impl::OnRequest(evhttp_request* request, void* arg) noexcept {
  auto* self = static_cast<Impl*>(arg);
  self->door_thread_.AssertOnOwner();
  evhttp_connection* evcon = evhttp_request_get_connection(request);
  auto found =
      self->connections_.find(evhttp_connection_get_bufferevent(evcon));
  if (found == self->connections_.end()) {
    // A connection whose bufferevent OnAccept could not make: untracked,
    // so it is not served.
    evhttp_add_header(evhttp_request_get_output_headers(request), "Connection",
                      "close");
    evhttp_send_error(request, 500, "untracked connection");
    return;
  }
  Connection* connection = found->second.get();
  if (connection->evcon == nullptr) self->Attach(connection, evcon);
  evtimer_del(connection->deadline);
  self->Handle(connection, request);
}

void HttpDoor::Impl::Handle(Connection* connection, evhttp_request* request) {
  if (connection->over_limit) {
    HttpReply reply = ReplyForError(MakeReadError(
        ReadEnd::kOverloaded,
        absl::StrCat("too many connections (http_max_connections=",
                     options_.max_connections, ")")));
    reply.close = true;
    Answer(connection, request, std::move(reply));
    return;
  }
  if (stopping_) {
    // The door is being destroyed: no read may start any more.
    Answer(connection, request, ReplyForError(ShuttingDownError()));
    return;
  }
  const HttpRequestIn in = RequestIn(request);
  if (in.method == HttpMethod::kOther) {
    core_.CountRejection(RejectReason::kInvalidArgument);
    if (evhttp_request_get_command(request) == EVHTTP_REQ_CONNECT) {
      // evhttp keeps a CONNECT's connection open after its answer, and
      // sends that answer unframed (a tunnel would follow): write it here.
      AnswerRawAndClose(connection, MethodNotAllowed());
      return;
    }
    Answer(connection, request, MethodNotAllowed());
    return;
  }
  absl::StatusOr<DoorRead> read =
      connection->input_refusal.ok()
          ? ReadFromHttp(in)
          : absl::StatusOr<DoorRead>(connection->input_refusal);
  if (read.ok() &&
      evbuffer_get_length(evhttp_request_get_input_buffer(request)) > 0) {
    read = absl::InvalidArgumentError(
        "a request body is not accepted: GET and HEAD carry none");
  }
  if (!read.ok()) {
    core_.CountRejection(RejectReason::kInvalidArgument);
    Answer(connection, request,
           ReplyForError(MakeReadError(ReadEnd::kInvalidArgument,
                                       read.status().message())));
    return;
  }
  auto* exchange = new Exchange(connection, request, core_);
  exchange->head = in.method == HttpMethod::kHead;
  connection->exchange = exchange;
  StartRead(exchange, *read);
}

}  // namespace tailgate::server::http_door
