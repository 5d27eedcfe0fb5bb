// Reads in flight at the HTTP door: admission and submission to the
// engine, the connection held (and watched for a close) while the engine
// has the read, and the delivery of its result. See http_door_impl.h.

#include <event2/bufferevent.h>
#include <event2/http.h>

#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "server/http_door/http_door_impl.h"

namespace tailgate::server::http_door {
namespace {

// While a read is in flight the door reads on, to see the client close;
// bytes it sends meanwhile (pipelined requests) wait for evhttp, up to
// this much, then reading pauses until the answer is written.
constexpr size_t kHeldInputBytes = 64 << 10;

}  // namespace

void HttpDoor::Impl::StartRead(Exchange* exchange, const DoorRead& read) {
  const absl::Time call_deadline = read.timeout.has_value()
                                       ? absl::Now() + *read.timeout
                                       : absl::InfiniteFuture();
  // This is the engine's loop thread: the read starts before the loop
  // sleeps again, and its callback runs here too, in a later step of the
  // loop (never inside Start), and answers at once.
  std::optional<ReadError> refused = exchange->read.Start(
      read.request, call_deadline, [this, exchange](ReadOutcome outcome) {
        door_thread_.AssertOnOwner();
        --outstanding_;
        Deliver(exchange, std::move(outcome));
        if (stopping_ && outstanding_ == 0) FinishTeardown();
      });
  if (refused.has_value()) {
    Send(exchange, ReplyForError(*refused));
    return;
  }
  exchange->state = Exchange::State::kReading;
  Hold(exchange);
  ++outstanding_;
}

// While the engine has the read, the door takes the connection's
// bufferevent callbacks from evhttp and reads on: evhttp 2.1 stops reading
// once it has a request, so it would not notice the client closing until
// it wrote the answer. Bytes the client sends meanwhile (a pipelined
// request) wait in the input buffer for evhttp, up to kHeldInputBytes.
void HttpDoor::Impl::Hold(Exchange* exchange) {
  bufferevent* bev = exchange->connection->bev;
  bufferevent_getcb(bev, &exchange->evhttp_read, &exchange->evhttp_write,
                    &exchange->evhttp_event, &exchange->evhttp_arg);
  bufferevent_getwatermark(bev, EV_READ, &exchange->low_watermark,
                           &exchange->high_watermark);
  bufferevent_setcb(bev, nullptr, nullptr, &Impl::OnHeldEvent, exchange);
  bufferevent_setwatermark(bev, EV_READ, 0, kHeldInputBytes);
  bufferevent_enable(bev, EV_READ);
}

// Reading stays on: Send, which always follows, hands the answer to evhttp,
// which keeps reading on while it writes (to see the client close), so
// turning it off here would only cost an epoll_ctl per read.
void HttpDoor::Impl::Unhold(Exchange* exchange) {
  bufferevent* bev = exchange->connection->bev;
  bufferevent_setwatermark(bev, EV_READ, exchange->low_watermark,
                           exchange->high_watermark);
  bufferevent_setcb(bev, exchange->evhttp_read, exchange->evhttp_write,
                    exchange->evhttp_event, exchange->evhttp_arg);
}

void HttpDoor::Impl::OnHeldEvent(bufferevent* bev, short what,
                                 void* arg) noexcept {
  auto* exchange = static_cast<Exchange*>(arg);
  Impl* self = exchange->connection->door;
  self->door_thread_.AssertOnOwner();
  if ((what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) != 0) {
    // The client has gone: closing runs OnClosed, which cancels the read.
    evhttp_connection_free(exchange->connection->evcon);
    return;
  }
  if ((what & BEV_EVENT_TIMEOUT) != 0) {
    // evhttp's inactivity timeout paused reading; the read's own deadline
    // bounds how long it is held, so keep watching for a close.
    bufferevent_enable(bev, EV_READ);
  }
}

void HttpDoor::Impl::Deliver(Exchange* exchange, ReadOutcome outcome) {
  if (exchange->connection == nullptr) {  // the client has gone
    End(exchange);
    return;
  }
  Unhold(exchange);
  exchange->state = Exchange::State::kWriting;
  // An answer waits in evhttp's buffers until the client takes it, and
  // counts against --max_buffered_bytes until then (End finishes the
  // read).
  HttpReply reply =
      outcome.answer.has_value()
          ? ReplyForResponse(*std::move(outcome.answer), exchange->head)
          : ReplyForError(outcome.error);
  Connection* connection = exchange->connection;
  Send(exchange, std::move(reply));
  WriteNow(connection);
}

}  // namespace tailgate::server::http_door
