// HttpDoor: the plain-HTTP front door (--http_listen). `GET /path?query`
// (or HEAD) is a read of that target, through the same read core
// (server/read/read_call.h) as a gRPC HedgedRead call and the same engine;
// http_mapping.h has the request, control-header, response and error mapping.
//
// Served by libevent's evhttp on the loop thread the engine runs on
// ("engine_loop", lent as an hedge::EventLoop), on the loop's own event_base: a
// read never changes thread, from the request's bytes to the answer's. HTTP/1.1
// keep-alive and pipelining as evhttp does them: one request at a time per
// connection, in order. Protection:
//   - at most `max_connections` open connections; at the limit a new one
//     closes the connection waiting longest for its next request (no read
//     in flight and no answer being written: idle, or trickling its
//     request), counted to `idle_closed`; with none such, the new one is
//     closed at once (or, if its request was already read, answered 503
//     RESOURCE_EXHAUSTED and closed), counted to `refused`, and the door
//     accepts nothing more until a connection has closed, so that a burst
//     waits in the kernel's backlog rather than holding descriptors;
//   - `header_timeout` from accept, and from the end of each answer, to the
//     end of the next request: a client that trickles its request (or idles
//     between requests) is disconnected;
//   - `send_timeout` from the start of an answer to the client having
//     taken all of it (the bytes it takes meanwhile extend nothing): a
//     client that stops reading, or reads a byte at a time, is
//     disconnected and the answer's bytes given back;
//   - the request line and headers are bounded (`max_header_bytes`, evhttp
//     answers 413 / 400), bodies by evhttp's body limit, and any request
//     with a body or body framing is refused (http_mapping.h);
//   - while a read is in flight the connection is watched: a client that
//     closes it cancels the read through Engine::Cancel, which aborts its
//     attempts.
//
// Threads: evhttp, every connection and request object, and the
// per-connection state live on the engine's loop thread. A read is
// submitted from there (the engine starts it before the loop sleeps again,
// without a wake-up), and its completion callback, on the same thread,
// writes the answer at once: no queue, no lock, no hand-over.
//
// Example:
//   absl::StatusOr<std::unique_ptr<HttpDoor>> door =
//       HttpDoor::Start({address, 1024, absl::Seconds(10)}, core, loop);
//   log.Info("listening", {{"service", "http"},
//                          {"addr", (*door)->address().ToString()}});
//
// Thread safety: Start and the destructor from one thread (main), never
// from the engine's loop thread (each waits for a step run there). The
// core (its engine, gate and rejections) must outlive the door. The
// destructor cancels reads still in flight, waits for the engine to
// complete them and closes every connection, on the loop thread: destroy
// the door before the engine. Start fails (FAILED_PRECONDITION) if the
// loop is not running.

#ifndef TAILGATE_SERVER_HTTP_DOOR_HTTP_DOOR_H_
#define TAILGATE_SERVER_HTTP_DOOR_HTTP_DOOR_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hedge/transport/event_loop.h"
#include "server/net/accept_backoff.h"
#include "server/net/listen_address.h"
#include "server/read/read_call.h"

namespace tailgate::server::http_door {

struct HttpDoorOptions {
  ListenAddress address;  // host:port, [v6]:port or unix:/path
  int max_connections = 1024;
  absl::Duration header_timeout = absl::Seconds(10);
  // The request line and headers together. Above the hygiene limits on a
  // target (8 KiB) and headers (32 KiB) plus their framing.
  int64_t max_header_bytes = 48 << 10;
  absl::Duration send_timeout = absl::Seconds(10);
  // accept() failed (errno, failures): the listener rests for a second
  // (AcceptBackoff) instead of spinning.
  AcceptBackoff::Report accept_failed;
  // Connections closed at the limit so far (each call: the running count).
  std::function<void(uint64_t)> refused;      // the new one, none idle
  std::function<void(uint64_t)> idle_closed;  // the one waiting longest
};

class HttpDoor {
 public:
  // Binds and starts serving. A Unix socket path left by an earlier process
  // is replaced.
  // `loop` is the loop thread the door serves on, the one the core's
  // engine runs on; it must outlive the door.
  static absl::StatusOr<std::unique_ptr<HttpDoor>> Start(
      const HttpDoorOptions& options, ReadCore& core, hedge::EventLoop& loop);

  ~HttpDoor();
  HttpDoor(const HttpDoor&) = delete;
  HttpDoor& operator=(const HttpDoor&) = delete;

  // The bound address, with the real port when 0 was asked for.
  const ListenAddress& address() const;

 private:
  class Impl;
  explicit HttpDoor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tailgate::server::http_door

#endif  // TAILGATE_SERVER_HTTP_DOOR_HTTP_DOOR_H_
