// Connections of the HTTP door: accept, the connection limit, the header
// timeout between requests (keep-alive), close. See http_door_impl.h.

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include <memory>
#include <utility>

#include "absl/time/time.h"
#include "server/http_door/http_door_impl.h"

namespace tailgate::server::http_door {

// evhttp asks for a bufferevent for each accepted connection: the one hook
// it offers at accept time. The evhttp_connection does not exist yet, so
// OnRegister, on the next loop iteration, finds it, sets the close callback
// and closes it if it is over the limit; a first request may come earlier
// (OnRequest then attaches it). OnRegister runs from an event of the
// connection's own, so that a teardown before it runs can cancel it.
bufferevent* HttpDoor::Impl::OnAccept(event_base* base, void* arg) noexcept {
  auto* self = static_cast<Impl*>(arg);
  self->door_thread_.AssertOnOwner();
  bufferevent* bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
  if (bev == nullptr) return nullptr;  // evhttp makes its own; refused later
  bufferevent_incref(bev);
  ++self->open_connections_;
  auto connection = std::make_unique<Connection>(Connection{
      self, bev, self->open_connections_ > self->options_.max_connections});
  connection->header_timer =
      evtimer_new(base, &Impl::OnHeaderTimeout, connection.get());
  connection->registration =
      evtimer_new(base, &Impl::OnRegister, connection.get());
  const timeval now = {0, 0};
  if (connection->registration == nullptr ||
      evtimer_add(connection->registration, &now) != 0) {
    connection->registering = false;
    bufferevent_decref(bev);
  }
  self->connections_.emplace(bev, std::move(connection));
  return bev;
}

void HttpDoor::Impl::OnRegister(evutil_socket_t, short, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  bufferevent* bev = connection->bev;
  if (connection->evcon == nullptr && !connection->closed) {
    // evhttp passes its evhttp_connection as the bufferevent's callback
    // argument (libevent 2.1, http.c); bufferevent_free clears it, so null
    // means evhttp already closed the connection.
    bufferevent_data_cb read, write;
    bufferevent_event_cb event;
    void* evcon = nullptr;
    bufferevent_getcb(bev, &read, &write, &event, &evcon);
    if (evcon == nullptr) {
      self->MarkClosed(connection);
    } else {
      self->Attach(connection, static_cast<evhttp_connection*>(evcon));
    }
  }
  if (!connection->closed && connection->exchange == nullptr) {
    if (connection->over_limit) {
      // Runs OnClosed, which leaves the clean-up below to this function
      // while `registering` is set.
      evhttp_connection_free(connection->evcon);
    } else {
      self->ArmHeaderTimer(connection);
    }
  }
  connection->registering = false;
  if (connection->closed) {
    event_free(connection->header_timer);
    event_free(connection->registration);  // this one, which has run
    self->connections_.erase(bev);         // deletes `connection`
  }
  bufferevent_decref(bev);
}

void HttpDoor::Impl::Attach(Connection* connection, evhttp_connection* evcon) {
  connection->evcon = evcon;
  evhttp_connection_set_closecb(evcon, &Impl::OnClosed, connection);
}

void HttpDoor::Impl::MarkClosed(Connection* connection) {
  connection->closed = true;
  --open_connections_;
}

void HttpDoor::Impl::ArmHeaderTimer(Connection* connection) {
  const timeval tv = absl::ToTimeval(options_.header_timeout);
  evtimer_add(connection->header_timer, &tv);
}

void HttpDoor::Impl::OnHeaderTimeout(evutil_socket_t, short,
                                     void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  if (connection->closed || connection->exchange != nullptr ||
      connection->evcon == nullptr) {
    return;
  }
  evhttp_connection_free(connection->evcon);  // runs OnClosed
}

// evhttp is about to free the connection: the client closed it, the door
// closed it (over the limit, header timeout, a held read's client gone),
// or the door is being destroyed.
void HttpDoor::Impl::OnClosed(evhttp_connection*, void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  if (connection->closed) return;
  if (Exchange* exchange = connection->exchange) {
    connection->exchange = nullptr;
    // evhttp frees the request with the connection.
    exchange->connection = nullptr;
    exchange->request = nullptr;
    if (exchange->state == Exchange::State::kReading) {
      // The engine's completion ends it (Deliver).
      exchange->read.ClientGone();
    } else {
      self->End(exchange);
    }
  }
  evtimer_del(connection->header_timer);
  self->MarkClosed(connection);
  if (!connection->registering) {
    event_free(connection->header_timer);
    if (connection->registration != nullptr) {
      event_free(connection->registration);  // not pending: it has run
    }
    self->connections_.erase(connection->bev);
  }
}

}  // namespace tailgate::server::http_door
