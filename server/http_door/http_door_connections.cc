// Connections of the HTTP door: accept, the connection limit, the header
// timeout between requests (keep-alive), the watch for NUL bytes, close.
// See http_door_impl.h.

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
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
  bool over_limit = false;
  if (self->open_connections_ >= self->options_.max_connections) {
    if (self->CloseLongestWaiting()) {
      ++self->idle_closed_;
      if (self->options_.idle_closed) {
        self->options_.idle_closed(self->idle_closed_);
      }
    } else {
      over_limit = true;
      ++self->refused_;
      if (self->options_.refused) self->options_.refused(self->refused_);
      // This one is closed on the next loop turn (OnRegister): accept no
      // more until then (libevent stops its accept loop once disabled).
      self->accepting_paused_ = true;
      evconnlistener_disable(self->listener_);
    }
  }
  bufferevent_incref(bev);
  ++self->open_connections_;
  auto connection =
      std::make_unique<Connection>(Connection{self, bev, over_limit});
  connection->deadline =
      evtimer_new(base, &Impl::OnDeadline, connection.get());
  connection->registration =
      evtimer_new(base, &Impl::OnRegister, connection.get());
  connection->input_watch = evbuffer_add_cb(bufferevent_get_input(bev),
                                            &Impl::OnInput, connection.get());
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
      self->ArmHeaderDeadline(connection);
    }
  }
  connection->registering = false;
  if (connection->closed) {
    event_free(connection->deadline);
    event_free(connection->registration);  // this one, which has run
    self->connections_.erase(bev);         // deletes `connection`
  }
  bufferevent_decref(bev);
}

void HttpDoor::Impl::Attach(Connection* connection, evhttp_connection* evcon) {
  connection->evcon = evcon;
  evhttp_connection_set_closecb(evcon, &Impl::OnClosed, connection);
}

bool HttpDoor::Impl::CloseLongestWaiting() {
  Connection* longest = nullptr;
  for (auto& [bev, connection] : connections_) {
    Connection* c = connection.get();
    if (c->closed || c->evcon == nullptr || c->exchange != nullptr ||
        c->over_limit) {
      continue;
    }
    if (longest == nullptr || c->waiting_since < longest->waiting_since) {
      longest = c;
    }
  }
  if (longest == nullptr) return false;
  evhttp_connection_free(longest->evcon);  // runs OnClosed
  return true;
}

void HttpDoor::Impl::MarkClosed(Connection* connection) {
  connection->closed = true;
  --open_connections_;
  // Back at the limit: the next accept may find a waiting one to close.
  if (accepting_paused_ && open_connections_ <= options_.max_connections &&
      listener_ != nullptr && !stopping_) {
    accepting_paused_ = false;
    evconnlistener_enable(listener_);
  }
  if (connection->input_watch != nullptr) {
    evbuffer_remove_cb_entry(bufferevent_get_input(connection->bev),
                             connection->input_watch);
    connection->input_watch = nullptr;
  }
}

// evhttp reads the request line and headers as C strings, so a NUL byte
// would cut a header value short there, unseen. This callback runs as each
// read adds bytes to the input, before evhttp parses them (libevent 2.1
// runs evbuffer callbacks inside the read unless they are deferred, and
// the door defers none): the bytes of the line holding the first NUL make
// the connection's refusal. Nothing a read may carry holds a NUL (a body is
// refused anyway), so the stream is not worth reading further.
void HttpDoor::Impl::OnInput(evbuffer* input, const evbuffer_cb_info* info,
                             void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  connection->door->door_thread_.AssertOnOwner();
  if (info->n_added == 0 || !connection->input_refusal.ok()) return;
  evbuffer_ptr added;
  evbuffer_ptr_set(input, &added, evbuffer_get_length(input) - info->n_added,
                   EVBUFFER_PTR_SET);
  const evbuffer_ptr nul = evbuffer_search(input, "", 1, &added);
  if (nul.pos < 0) return;
  // evhttp drains whole lines only: the NUL's line starts in the buffer.
  std::string before(static_cast<size_t>(nul.pos), '\0');
  evbuffer_copyout(input, before.data(), before.size());
  const size_t newline = before.rfind('\n');
  connection->input_refusal = NulRefusal(absl::string_view(before).substr(
      newline == std::string::npos ? 0 : newline + 1));
}

void HttpDoor::Impl::ArmHeaderDeadline(Connection* connection) {
  connection->waiting_since = ++idle_order_;
  const timeval tv = absl::ToTimeval(options_.header_timeout);
  evtimer_add(connection->deadline, &tv);  // replaces a pending deadline
}

void HttpDoor::Impl::ArmSendDeadline(Connection* connection) {
  const timeval tv = absl::ToTimeval(options_.send_timeout);
  evtimer_add(connection->deadline, &tv);
}

void HttpDoor::Impl::OnDeadline(evutil_socket_t, short,
                                     void* arg) noexcept {
  auto* connection = static_cast<Connection*>(arg);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  if (connection->closed || connection->evcon == nullptr) return;
  // A read in flight is the engine's to end (its deadline); the timer is
  // not armed then, but may have fired just before the read began.
  if (connection->exchange != nullptr &&
      connection->exchange->state == Exchange::State::kReading) {
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
  evtimer_del(connection->deadline);
  self->MarkClosed(connection);
  if (!connection->registering) {
    event_free(connection->deadline);
    if (connection->registration != nullptr) {
      event_free(connection->registration);  // not pending: it has run
    }
    self->connections_.erase(connection->bev);
  }
}

}  // namespace tailgate::server::http_door
