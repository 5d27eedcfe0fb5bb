// ReadDoor: HedgedRead.Read over gRPC, served on the engine's loop thread
// (--read_listen). The same calls as the --listen server's Read, through
// the same read core (server/read/read_call.h) and engine, answered by the
// same mapping
// (the ReadResponse FillReadResponse builds, written by
// read_response_wire.h; the status codes of tailgate.proto); what differs is
// the front: the door speaks HTTP/2 cleartext (h2c, prior knowledge, as
// gRPC clients do) itself, with nghttp2, on the loop's event_base. A read
// never changes thread, from the request's frames to the answer's: no
// gRPC thread pool, completion queue or hand-over.
//
// It serves one method itself, /tailgate.v1.HedgedRead/Read, unary,
// uncompressed. Every other call (health checks, reflection, any method a
// client asks for) is relayed when the door is given `relay` (it serves
// --listen so): passed on, stream for stream, to the gRPC library's server
// over an HTTP/2 connection of the door's own, one per client connection
// that needs it, made on the first such call (a socket pair whose other
// end `relay` hands to that server). Without `relay` (--read_listen), any
// other path is answered UNIMPLEMENTED.
//
// Protection, whatever a client sends:
//   - at most `max_connections` open connections; one accepted beyond
//     that is closed at once;
//   - `handshake_timeout` for a new connection's preface and SETTINGS;
//   - SETTINGS_MAX_CONCURRENT_STREAMS `max_streams_per_connection`; a
//     stream over it is refused (REFUSED_STREAM, which clients retry);
//   - request headers bounded (`max_header_bytes` per stream, else the
//     call fails RESOURCE_EXHAUSTED), the message too
//     (`max_message_bytes`, RESOURCE_EXHAUSTED), and the request bytes
//     the door holds over all streams of all connections, each open call
//     counted 1 KiB besides its message (`max_request_bytes`: a call
//     whose message would pass it fails RESOURCE_EXHAUSTED at once; a
//     stream opened with no room left is refused, REFUSED_STREAM);
//   - answers count against --max_buffered_bytes (the read core) from
//     when they are built until they are written; one the client does not
//     take within `send_timeout` (flow control held shut, or a socket not
//     read) is reset (CANCEL) and counted as dropped; a connection whose
//     socket takes no byte for `send_timeout` is closed, since not even a
//     reset reaches that client;
//   - output is written as the socket takes it: the door asks nghttp2 for
//     more frames only while less than a socket buffer's worth waits.
//   - a stream reset by the client, or a connection closed, cancels its
//     read through Engine::Cancel.
//   - a relayed call's request bytes not yet taken by the server count
//     against `max_request_bytes`, at most `max_message_bytes` per call
//     (more fails the call RESOURCE_EXHAUSTED); its answer's bytes not yet
//     taken by the client are at most the relay's flow-control window
//     (64 KiB per connection), which the door widens only as the client
//     takes them.
//
// Threads: as the HTTP door (http_door.h): every connection, stream and
// nghttp2 session lives on the engine's loop thread; Start and the
// destructor run on another thread (main) and wait for steps run there.
//
// Example:
//   absl::StatusOr<std::unique_ptr<ReadDoor>> door =
//       ReadDoor::Start({.address = address}, core);
//
// Thread safety: Start and the destructor from one thread, never the
// engine's loop thread. The core must outlive the door; destroy the
// door before the engine. The destructor cancels reads still in flight and
// waits for the engine to complete them. Start fails (FAILED_PRECONDITION)
// if the engine runs no loop.

#ifndef TAILGATE_SERVER_READ_DOOR_READ_DOOR_H_
#define TAILGATE_SERVER_READ_DOOR_READ_DOOR_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/net/accept_backoff.h"
#include "server/net/listen_address.h"
#include "server/read/read_call.h"

namespace tailgate::server::read_door {

struct ReadDoorOptions {
  ListenAddress address;  // host:port, [v6]:port or unix:/path
  int max_connections = 1024;
  int max_streams_per_connection = 256;
  absl::Duration handshake_timeout = absl::Seconds(10);
  absl::Duration send_timeout = absl::Seconds(5);
  // As the --listen server's limits (grpc_server.h).
  int64_t max_header_bytes = 16 << 10;
  int64_t max_message_bytes = 64 << 10;
  // Request messages received and not yet handed to the engine, over every
  // stream: main gives it --max_grpc_memory_bytes.
  int64_t max_request_bytes = int64_t{64} << 20;
  // accept() failed (errno, failures): the listener rests for a second.
  AcceptBackoff::Report accept_failed;
  // A connection was closed at accept: `max_connections` were open.
  // Called with the count so far.
  std::function<void(uint64_t refused)> refused;
  // Set: calls of other methods are relayed; `relay` is given one end of a
  // new socket pair (its own from then on, whatever it returns) for the
  // server to serve. Called on the loop thread; an error fails the calls
  // waiting for that relay with UNAVAILABLE.
  std::function<absl::Status(int fd)> relay;
};

class ReadDoor {
 public:
  // Binds and starts serving. A Unix socket path left by an earlier process
  // is replaced.
  static absl::StatusOr<std::unique_ptr<ReadDoor>> Start(
      const ReadDoorOptions& options, ReadCore& core);

  ~ReadDoor();
  ReadDoor(const ReadDoor&) = delete;
  ReadDoor& operator=(const ReadDoor&) = delete;

  // The bound address, with the real port when 0 was asked for.
  const ListenAddress& address() const;

 private:
  class Impl;
  explicit ReadDoor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tailgate::server::read_door

#endif  // TAILGATE_SERVER_READ_DOOR_READ_DOOR_H_
