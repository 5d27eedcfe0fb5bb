// ReadDoor: HedgedRead.Read over gRPC, served on the engine's loop thread
// (the loop front on --listen, and --read_listen). The same calls as the
// gRPC library's Read, through the same read core (server/read/read_call.h)
// and engine, answered by the same mapping
// (the ReadResponse FillReadResponse builds, written by
// read_response_wire.h; the status codes of tailgate.proto); what differs is
// the front: the door speaks HTTP/2 cleartext (h2c, prior knowledge, as
// gRPC clients do) itself, with nghttp2, on the loop's event_base. A read
// never changes thread, from the request's frames to the answer's: no
// gRPC thread pool, completion queue or hand-over.
//
// It serves /tailgate.v1.HedgedRead/Read, unary, and ReadMany (server
// streaming: one item per read, in completion order), uncompressed. Given a
// `serving_state` (it serves --listen so), it serves on the same session
// what a gRPC server answers besides: grpc.health.v1.Health Check and
// Watch ("" and tailgate.v1.HedgedRead, SERVING or NOT_SERVING as the
// state says; others NOT_FOUND for Check, SERVICE_UNKNOWN for Watch) and
// server reflection v1 and v1alpha (server/services answers both). Any
// other path is answered UNIMPLEMENTED. When the door is destroyed, open
// Watch and reflection streams end with UNAVAILABLE "tailgate is shutting
// down" in their trailers before the connection's GOAWAY.
//
// Protection, whatever a client sends:
//   - at most `max_connections` open connections; one accepted beyond
//     that takes the place of the connection that has had no call open
//     the longest (told GOAWAY NO_ERROR), or, with a call open on every
//     connection, is closed at once;
//   - a frame budget per connection (frame_budget.h: gRFC A8's ping
//     policy, frames that carry no work) and a header block that decodes
//     to at most 4 x `max_header_bytes`, else GOAWAY ENHANCE_YOUR_CALM;
//   - `handshake_timeout` for a new connection's preface and SETTINGS,
//     `receive_timeout` for a Read call's request to arrive whole,
//     `idle_timeout` for a connection with no call open (then GOAWAY
//     NO_ERROR and the connection is closed; a client reconnects when it
//     next calls);
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
//   - a health or reflection call is counted against `max_request_bytes`
//     as a Read is (1 KiB, and its request bytes not yet answered: at most
//     `max_message_bytes` and a message prefix); an open Watch holds less
//     than the 1 KiB, and at most one status waits behind the one being
//     sent, however long the client leaves it unread; reflection answers
//     are sent one at a time per stream, each counted against
//     --max_buffered_bytes, under `send_timeout`, as Read's answers.
//
// Threads: as the HTTP door (http_door.h): every connection, stream and
// nghttp2 session lives on the engine's loop thread; Start and the
// destructor run on another thread (main) and wait for steps run there.
//
// Example:
//   absl::StatusOr<std::unique_ptr<ReadDoor>> door =
//       ReadDoor::Start({.address = address}, core, loop);
//
// Thread safety: Start and the destructor from one thread, never the
// engine's loop thread. The core must outlive the door; destroy the
// door before the engine. The destructor cancels reads still in flight and
// waits for the engine to complete them. Start fails (FAILED_PRECONDITION)
// if the loop is not running.

#ifndef TAILGATE_SERVER_READ_DOOR_READ_DOOR_H_
#define TAILGATE_SERVER_READ_DOOR_READ_DOOR_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hedge/transport/event_loop.h"
#include "server/net/accept_backoff.h"
#include "server/net/listen_address.h"
#include "server/read/read_call.h"
#include "server/services/serving_state.h"

namespace tailgate::server::read_door {

struct ReadDoorOptions {
  ListenAddress address;  // host:port, [v6]:port or unix:/path
  int max_connections = 1024;
  int max_streams_per_connection = 256;
  absl::Duration handshake_timeout = absl::Seconds(10);
  // How long a Read call's request may take to arrive whole, from its
  // HEADERS (less if its grpc-timeout is shorter): then it fails
  // DEADLINE_EXCEEDED and its request bytes are given back.
  absl::Duration receive_timeout = absl::Seconds(10);
  // How long a connection may stay open with no call open.
  absl::Duration idle_timeout = absl::Minutes(5);
  absl::Duration send_timeout = absl::Seconds(5);
  // As the --listen server's limits (grpc_server.h).
  int64_t max_header_bytes = 16 << 10;
  int64_t max_message_bytes = 64 << 10;
  // Request messages received and not yet handed to the engine, over every
  // stream: main gives it --max_grpc_memory_bytes.
  int64_t max_request_bytes = int64_t{64} << 20;
  // Reads one ReadMany call may carry (--max_batch_reads); its request
  // message may be 1 KiB a read, at least max_message_bytes and at most a
  // connection's share of max_request_bytes.
  int max_batch_reads = 1000;
  // What one connection may hold, so that a client that does not read its
  // answers cannot take what others need: Read calls admitted and not yet
  // finished (a read in flight, or its answer unsent; more are refused
  // RESOURCE_EXHAUSTED), and bytes of answers unsent (an answer past it is
  // dropped, RESOURCE_EXHAUSTED). 0: no cap of its own. main gives them 7/8
  // of --max_requests and half of --max_buffered_bytes.
  int64_t max_reads_per_connection = 0;
  int64_t max_answer_bytes_per_connection = 0;
  // The reads of every ReadMany call together, at most (0: no cap of
  // their own; main gives them 7/8 of --max_requests): Read calls always
  // find room beside any number of batches. A batch read past it waits
  // for a place.
  int64_t max_batch_reads_in_flight = 0;
  // accept() failed (errno, failures): the listener rests for a second.
  AcceptBackoff::Report accept_failed;
  // A connection was closed at accept: `max_connections` were open, each
  // with a call. Called with the count so far.
  std::function<void(uint64_t refused)> refused;
  // A connection with no call open was closed: to make room for a new one,
  // or past `idle_timeout`. Called with the count so far.
  std::function<void(uint64_t closed)> idle_closed;
  // Set: the door serves health (following this state) and reflection.
  // Must outlive the door.
  services::ServingState* serving_state = nullptr;
};

class ReadDoor {
 public:
  // Binds and starts serving. A Unix socket path left by an earlier process
  // is replaced.
  // `loop` is the loop thread the door serves on, the one the core's
  // engine runs on; it must outlive the door.
  static absl::StatusOr<std::unique_ptr<ReadDoor>> Start(
      const ReadDoorOptions& options, ReadCore& core, hedge::EventLoop& loop);

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
