// Answers from the HTTP door: replies (status, headers, body; error
// replies come from http_mapping.h with their Tailgate-Error header)
// handed to evhttp or, for CONNECT, written raw; the write done at once
// after a read; the end of an exchange. See http_door_impl.h.

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/http_door/http_door_impl.h"

namespace tailgate::server::http_door {
namespace {

void FreeBody(const void* /*data*/, size_t /*length*/, void* body) {
  delete static_cast<std::string*>(body);
}

}  // namespace

// evhttp hands an answer to the connection's bufferevent, which writes it
// once epoll says the socket is writable: two epoll_ctl (watch for
// writable, stop) and a loop turn per answer, on a socket that almost
// always has room. Instead the answer is written here at once; if it all
// went, the write watch is dropped before epoll ever sees it (the base's
// change list) and evhttp's own write-done callback runs, exactly as the
// bufferevent would run it. Only from Deliver: outside evhttp's callbacks,
// since evhttp may free the request and the connection in that callback
// (it reads a pipelined request only on a later loop turn).
void HttpDoor::Impl::WriteNow(Connection* connection) {
  bufferevent* bev = connection->bev;
  evbuffer* output = bufferevent_get_output(bev);
  if (evbuffer_write(output, bufferevent_getfd(bev)) < 0 ||
      evbuffer_get_length(output) != 0) {
    return;  // the bufferevent finishes the write, or reports the error
  }
  bufferevent_disable(bev, EV_WRITE);
  bufferevent_data_cb read, write;
  bufferevent_event_cb event;
  void* arg = nullptr;
  bufferevent_getcb(bev, &read, &write, &event, &arg);
  // Runs OnReplyComplete, then evhttp frees the request and either closes
  // the connection or waits for its next request.
  if (write != nullptr) write(bev, arg);
}

void HttpDoor::Impl::Answer(Connection* connection, evhttp_request* request,
                            HttpReply reply) {
  auto* exchange = new Exchange(connection, request, core_);
  exchange->head = evhttp_request_get_command(request) == EVHTTP_REQ_HEAD;
  connection->exchange = exchange;
  Send(exchange, std::move(reply));
}

void HttpDoor::Impl::AnswerRawAndClose(Connection* connection,
                                       const HttpReply& reply) {
  std::string bytes = absl::StrCat(
      "HTTP/1.1 ", reply.status, " ",
      reply.status == 405 ? "Method Not Allowed" : "Error", "\r\n");
  for (const hygiene::HttpHeader& header : reply.headers) {
    absl::StrAppend(&bytes, header.name, ": ", header.value, "\r\n");
  }
  absl::StrAppend(&bytes, "Content-Length: ", reply.body.size(),
                  "\r\nConnection: close\r\n\r\n", reply.body);
  bufferevent* bev = connection->bev;
  ArmSendDeadline(connection);
  bufferevent_disable(bev, EV_READ);
  bufferevent_setcb(bev, nullptr, &Impl::OnRawWritten, &Impl::OnRawEvent,
                    connection);
  bufferevent_write(bev, bytes.data(), bytes.size());
  bufferevent_enable(bev, EV_WRITE);
}

// The raw answer is out (or the client has gone, or stopped reading until
// the inactivity timeout): close. The request is freed with the connection.
void HttpDoor::Impl::OnRawWritten(bufferevent*, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  connection->door->door_thread_.AssertOnOwner();
  evhttp_connection_free(connection->evcon);  // runs OnClosed
}

void HttpDoor::Impl::OnRawEvent(bufferevent*, short, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  connection->door->door_thread_.AssertOnOwner();
  evhttp_connection_free(connection->evcon);  // runs OnClosed
}

void HttpDoor::Impl::Send(Exchange* exchange, HttpReply reply) {
  evhttp_request* request = exchange->request;
  evkeyvalq* headers = evhttp_request_get_output_headers(request);
  for (const hygiene::HttpHeader& header : reply.headers) {
    // evhttp refuses a value with CR or LF; a replica's headers have none.
    evhttp_add_header(headers, header.name.c_str(), header.value.c_str());
  }
  if (reply.close || core_.draining()) {
    evhttp_add_header(headers, "Connection", "close");
  }
  evbuffer* body = evbuffer_new();
  if (exchange->head) {
    // evhttp would send a body even to HEAD: keep only its length.
    if (evhttp_find_header(headers, "Content-Length") == nullptr) {
      evhttp_add_header(headers, "Content-Length",
                        absl::StrCat(reply.body.size()).c_str());
    }
  } else if (!reply.body.empty()) {
    auto* owned = new std::string(std::move(reply.body));
    evbuffer_add_reference(body, owned->data(), owned->size(), &FreeBody,
                           owned);
  }
  exchange->state = Exchange::State::kWriting;
  // Before the reply: an answer written at once re-arms the header
  // deadline in OnReplyComplete.
  ArmSendDeadline(exchange->connection);
  evhttp_request_set_on_complete_cb(request, &Impl::OnReplyComplete, exchange);
  evhttp_send_reply(request, reply.status, nullptr, body);
  evbuffer_free(body);
}

// evhttp has written the whole answer; it frees the request next, then
// closes the connection or waits for its next request.
void HttpDoor::Impl::OnReplyComplete(evhttp_request*, void* arg) noexcept {
  auto* exchange = static_cast<Exchange*>(arg);
  Connection* connection = exchange->connection;
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  connection->exchange = nullptr;
  self->End(exchange);
  self->ArmHeaderDeadline(connection);
}

void HttpDoor::Impl::End(Exchange* exchange) {
  delete exchange;  // finishes its read: the slot and the answer's bytes
}

}  // namespace tailgate::server::http_door
