// ReadDoor::Impl: the read door's state, its libevent events and its
// nghttp2 callbacks. Internal to the read door: callers use read_door.h.
//
// One call is one HTTP/2 stream: nghttp2 parses the client's frames into
// a Call (headers, then the message), the door admits it as an engine
// read when the request ends, and answers it when the engine completes
// the read: response headers, the message, trailers (or trailers alone
// for an error). The pieces, by file:
//   - read_door.cc: Start, binding the listener on the loop, and the
//     teardown the destructor runs there;
//   - read_door_connections.cc: accept, the connection limit, the
//     handshake timeout, moving bytes between the socket and nghttp2,
//     close;
//   - read_door_streams.cc: nghttp2's callbacks, which turn frames into
//     calls;
//   - read_door_calls.cc: a call's admission, its engine read, its answer,
//     and the send timeout.
//
// Thread ownership: everything below runs on the engine's loop thread
// (door_thread_, bound by Bind), and every callback asserts it; no lock,
// no hand-over. The exceptions, as in the HTTP door: the constructor,
// Start and the destructor run on the thread that starts and destroys the
// door (main), which waits for each step it posts to the loop; if the loop
// is not running, the destructor's thread takes door_thread_ over and
// tears down itself. torn_down_ is the one state shared between threads.

#ifndef TAILGATE_SERVER_READ_DOOR_READ_DOOR_IMPL_H_
#define TAILGATE_SERVER_READ_DOOR_READ_DOOR_IMPL_H_

#include <event2/event.h>
#include <event2/listener.h>
#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hedge/sync/thread_checker.h"
#include "hedge/transport/engine.h"
#include "server/net/accept_backoff.h"
#include "server/net/listen_address.h"
#include "server/net/loop_guest.h"
#include "server/read/read_call.h"
#include "server/read_door/read_door.h"

namespace tailgate::server::read_door {

// What one call is counted for against max_request_bytes besides its
// message: the Call, nghttp2's stream, their bookkeeping (about 600 bytes,
// rounded up).
inline constexpr int64_t kCallBytes = 1024;

class ReadDoor::Impl {
 public:
  Impl(const ReadDoorOptions& options, ReadCore& core)
      : options_(options), core_(core) {}
  ~Impl();

  // Loop thread: binds the listener on the engine's base.
  absl::Status Bind(event_base* base);
  const ListenAddress& address() const { return address_; }

 private:
  struct Call;

  struct Relay;

  // One end of an HTTP/2 connection the door speaks: a client's
  // (Connection) or its own to the gRPC server (Relay). Door thread only.
  struct Wire {
    int fd = -1;
    nghttp2_session* session = nullptr;
    event* readable = nullptr;  // persistent, while the wire is open
    // Armed while output waits for the socket, with --send_timeout as its
    // timeout: a socket that takes nothing for that long is closed.
    event* writable = nullptr;
    // Activated (FlushSoon) when the other wire of a relayed call gave
    // this one something to send: it is flushed from the loop, never from
    // inside the other session's callbacks.
    event* kick = nullptr;
    // Frames nghttp2 produced that the socket has not taken yet, from
    // output_sent on.
    std::string output;
    size_t output_sent = 0;
  };
  enum class WireState {
    kOpen,
    kClosed,  // the peer has gone, the socket or nghttp2 failed, or
              // both sides are done: the owner closes the wire
  };

  // One accepted connection, from accept until Close. Door thread only.
  struct Connection {
    Impl* door;
    Wire wire;
    event* handshake_timer = nullptr;
    event* send_timer = nullptr;       // armed while an answer is being sent
    absl::flat_hash_set<Call*> calls;  // the open streams' calls
    // To the gRPC server, from the first relayed call on (options_.relay).
    std::unique_ptr<Relay> relay;
  };

  // An HTTP/2 client connection over a socket pair whose other end the
  // gRPC library's server serves (options_.relay): it carries the
  // connection's calls of any method but Read, stream for stream. Door
  // thread only; owned by its connection.
  struct Relay {
    Impl* door;
    Connection* connection;
    Wire wire;
    bool going_away = false;  // the server sent GOAWAY: no new stream
  };

  // What a relayed call holds besides the Call: the request's header
  // fields to pass on, and the bytes waiting in each direction.
  struct Relayed {
    std::vector<std::pair<std::string, std::string>> fields;
    int32_t server_stream = -1;  // on the relay, once submitted
    bool server_open = false;    // that stream is open
    // Request bytes the relay has not taken yet (counted in
    // request_bytes_).
    std::string to_server;
    // The request's gRPC framing, followed as it passes: a message that
    // announces more than max_message_bytes fails the call before the
    // server buffers it. In a message's 5-byte prefix while message_left
    // is 0.
    uint8_t prefix[5] = {};
    size_t prefix_seen = 0;
    uint64_t message_left = 0;
    bool request_ended = false;
    // The answer's header fields as they arrive, then its trailers.
    std::vector<std::pair<std::string, std::string>> response_fields;
    std::vector<std::pair<std::string, std::string>> trailers;
    bool response_started = false;  // response headers given to the client
    // Answer bytes the client has not taken yet; at most the relay's
    // flow-control window (it is widened as they are taken).
    std::string to_client;
    bool response_ended = false;
  };

  // One call (an HTTP/2 stream). Door thread only. Owned by its
  // connection while the stream is open; once the stream has closed, by
  // the engine's callback if a read is still in flight.
  struct Call {
    enum class State {
      kReceiving,  // headers and message arriving
      kReading,    // the engine has the read
      kAnswering,  // the answer is being sent
      kRelayed,    // passed on to the gRPC server (options_.relay)
    };
    Call(Connection* connection, int32_t stream_id, ReadCore& core)
        : connection(connection), stream_id(stream_id), read(core) {}

    Connection* connection;  // null once the stream has closed
    int32_t stream_id;
    State state = State::kReceiving;
    // The first thing found wrong with the request, answered once it has
    // ended (a gRPC status, or an HTTP status for a request that is not
    // gRPC at all).
    absl::Status refusal;
    int http_status = 200;
    bool grpc_content_type = false;  // content-type application/grpc seen
    bool path_seen = false;
    bool relay = false;     // a method to relay (its :path is not Read)
    std::string authority;  // kept until the path says whether to relay
    int64_t header_bytes = 0;
    std::optional<absl::Duration> timeout;  // grpc-timeout
    std::string body;                       // the request's DATA
    // The read, from admission to delivery; finished when the call is
    // freed.
    ReadCall read;
    // The framed answer message, sent from answer_sent on, then trailers.
    std::string answer;
    size_t answer_sent = 0;
    std::unique_ptr<Relayed> relayed;  // relayed calls only
  };

  // libevent callbacks (read_door_connections.cc); arg is the Connection.
  static void OnAccept(evconnlistener* listener, evutil_socket_t fd,
                       sockaddr* address, int length, void* arg) noexcept;
  static void OnReadable(evutil_socket_t fd, short what, void* arg) noexcept;
  static void OnWritable(evutil_socket_t fd, short what, void* arg) noexcept;
  static void OnKick(evutil_socket_t, short, void* arg) noexcept;
  static void OnHandshakeTimeout(evutil_socket_t, short, void* arg) noexcept;
  // read_door_calls.cc.
  static void OnSendTimeout(evutil_socket_t, short, void* arg) noexcept;

  // nghttp2 callbacks (read_door_streams.cc); user_data is the Connection.
  static int OnBeginHeaders(nghttp2_session* session,
                            const nghttp2_frame* frame,
                            void* user_data) noexcept;
  static int OnHeader(nghttp2_session* session, const nghttp2_frame* frame,
                      const uint8_t* name, size_t name_length,
                      const uint8_t* value, size_t value_length, uint8_t flags,
                      void* user_data) noexcept;
  static int OnDataChunk(nghttp2_session* session, uint8_t flags,
                         int32_t stream_id, const uint8_t* data, size_t length,
                         void* user_data) noexcept;
  static int OnFrame(nghttp2_session* session, const nghttp2_frame* frame,
                     void* user_data) noexcept;
  static int OnStreamClose(nghttp2_session* session, int32_t stream_id,
                           uint32_t error_code, void* user_data) noexcept;
  // The answer's data source (read_door_calls.cc).
  static ssize_t ReadAnswer(nghttp2_session* session, int32_t stream_id,
                            uint8_t* buffer, size_t length,
                            uint32_t* data_flags, nghttp2_data_source* source,
                            void* user_data) noexcept;

  // The relay (read_door_relay.cc). libevent callbacks: arg is the Relay.
  static void OnRelayReadable(evutil_socket_t, short, void* arg) noexcept;
  static void OnRelayWritable(evutil_socket_t, short what, void* arg) noexcept;
  static void OnRelayKick(evutil_socket_t, short, void* arg) noexcept;
  // nghttp2 callbacks of the relay's client session: user_data is the
  // Relay, a stream's user data its Call.
  static int OnRelayHeader(nghttp2_session* session, const nghttp2_frame* frame,
                           const uint8_t* name, size_t name_length,
                           const uint8_t* value, size_t value_length,
                           uint8_t flags, void* user_data) noexcept;
  static int OnRelayDataChunk(nghttp2_session* session, uint8_t flags,
                              int32_t stream_id, const uint8_t* data,
                              size_t length, void* user_data) noexcept;
  static int OnRelayFrame(nghttp2_session* session, const nghttp2_frame* frame,
                          void* user_data) noexcept;
  static int OnRelayStreamClose(nghttp2_session* session, int32_t stream_id,
                                uint32_t error_code, void* user_data) noexcept;
  // Data sources: the request to the server (on the relay's session), the
  // answer to the client (on the connection's).
  static ssize_t ReadRelayRequest(nghttp2_session* session, int32_t stream_id,
                                  uint8_t* buffer, size_t length,
                                  uint32_t* data_flags,
                                  nghttp2_data_source* source,
                                  void* user_data) noexcept;
  static ssize_t ReadRelayResponse(nghttp2_session* session, int32_t stream_id,
                                   uint8_t* buffer, size_t length,
                                   uint32_t* data_flags,
                                   nghttp2_data_source* source,
                                   void* user_data) noexcept;

  // Wires (read_door_connections.cc).
  // Hands nghttp2 what the socket has.
  static WireState Receive(Wire& wire);
  // Writes what nghttp2 has to send, as far as the socket takes it; arms
  // the writable event (with `stall` as its timeout) when the socket is
  // full.
  static WireState Send(Wire& wire, absl::Duration stall);
  static void FreeWire(Wire& wire);
  static void FlushSoon(Wire& wire) { event_active(wire.kick, EV_TIMEOUT, 1); }

  // Connections (read_door_connections.cc).
  // Writes what the connection has to send; closes it on an error or once
  // neither side has more to say. Nothing may touch the connection after
  // Flush.
  void Flush(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Frees the connection and its relay; its calls' reads in flight are
  // cancelled.
  void Close(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Calls (read_door_calls.cc).
  // The request has ended: refuse it, or admit and submit its read.
  void Start(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The engine has completed `call`'s read (its callback, on this thread).
  void Deliver(Call* call, ReadOutcome outcome)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Submits the answer: the message and OK trailers, or trailers alone.
  void Answer(Call* call, const absl::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The stream has closed (or its connection): cancels a read in flight
  // (unless its deadline is about to end it), else frees the call.
  void Detach(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void Free(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Frees what the call's request message holds, and its count in
  // request_bytes_.
  void ReleaseBody(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Relayed calls (read_door_relay.cc).
  // Its request headers have ended: opens its stream to the server (and
  // the relay, for the connection's first).
  void StartRelayed(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Makes the connection's relay and hands its other end to the server.
  absl::Status OpenRelay(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // More of its request has arrived (or its end): passed on.
  void ForwardRequest(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Follows the messages in `data`, the next bytes of a relayed request;
  // false once one announces more than max_message_bytes.
  bool FollowRelayedFraming(Relayed& relayed, const uint8_t* data,
                            size_t length) const;
  // Ends a relayed call that cannot go on: answered `status` if the client
  // has no response headers yet, else reset; its server stream is reset.
  void FailRelayed(Call* call, const absl::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Lets go of the call's server stream (reset if still open).
  void LeaveServerStream(Call* call)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void FlushRelay(Relay* relay) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The relay failed or the server closed it: its calls fail UNAVAILABLE
  // and it is freed (the next relayed call opens another).
  void DropRelay(Relay* relay) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Teardown (read_door.cc).
  void BeginTeardown() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void FinishTeardown() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Constant after Bind.
  const ReadDoorOptions options_;
  ReadCore& core_;
  event_base* base_ = nullptr;  // the engine's
  ListenAddress address_;
  nghttp2_session_callbacks* callbacks_ = nullptr;
  nghttp2_option* session_options_ = nullptr;
  nghttp2_session_callbacks* relay_callbacks_ = nullptr;
  nghttp2_option* relay_options_ = nullptr;

  // The engine's loop thread (bound by Bind); the destructor's if the loop
  // is not running.
  hedge::ThreadChecker door_thread_;
  evconnlistener* listener_ ABSL_GUARDED_BY(door_thread_) = nullptr;
  std::unique_ptr<AcceptBackoff> accept_backoff_ ABSL_GUARDED_BY(door_thread_);
  absl::flat_hash_map<Connection*, std::unique_ptr<Connection>> connections_
      ABSL_GUARDED_BY(door_thread_);
  bool stopping_ ABSL_GUARDED_BY(door_thread_) = false;  // the destructor runs
  // Engine reads whose callback has not run yet.
  int64_t outstanding_ ABSL_GUARDED_BY(door_thread_) = 0;
  // The request bytes calls hold (their `body`, and kCallBytes for each
  // call), at most options_.max_request_bytes.
  int64_t request_bytes_ ABSL_GUARDED_BY(door_thread_) = 0;
  // Connections closed at accept for the limit, so far.
  uint64_t refused_ ABSL_GUARDED_BY(door_thread_) = 0;

  // Set on the loop thread once FinishTeardown has run; the destructor
  // waits for it.
  TeardownLatch torn_down_;
};

}  // namespace tailgate::server::read_door

#endif  // TAILGATE_SERVER_READ_DOOR_READ_DOOR_IMPL_H_
