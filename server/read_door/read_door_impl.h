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
//     and the send timeout;
//   - read_door_services.cc: calls of the door's own services (health,
//     reflection; service_call.h), when the door is given a serving state;
//   - read_door_batches.cc: ReadMany calls (batch_call.h).
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
#include <list>
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
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/message_lite.h"
#include "hedge/sync/thread_checker.h"
#include "hedge/transport/engine.h"
#include "server/net/accept_backoff.h"
#include "server/net/listen_address.h"
#include "server/net/loop_guest.h"
#include "server/read/read_call.h"
#include "server/read/read_share.h"
#include "server/read_door/batch_call.h"
#include "server/read_door/frame_budget.h"
#include "server/read_door/read_door.h"
#include "server/read_door/read_response_wire.h"
#include "server/read_door/service_call.h"
#include "server/services/serving_state.h"

namespace tailgate::server::read_door {

// What one call is counted for against max_request_bytes besides its
// message: the Call, nghttp2's stream, their bookkeeping (about 600 bytes,
// rounded up). An open health Watch holds no more (service_call.h): its
// cost is bounded by this too.
inline constexpr int64_t kCallBytes = 1024;

// One connection may hold at most this share of max_request_bytes (but
// always room for one call and its largest message): a few connections
// sending requests that never end cannot take what the others need.
inline constexpr int64_t kConnectionShareDivisor = 8;

class ReadDoor::Impl {
 public:
  Impl(const ReadDoorOptions& options, ReadCore& core, hedge::EventLoop& loop);
  ~Impl();

  // Loop thread: binds the listener on the engine's base.
  absl::Status Bind(event_base* base);
  // Start's thread, once bound: follows options_.serving_state, if set.
  void FollowServing();
  const ListenAddress& address() const { return address_; }

 private:
  struct Call;

  // The door's end of a client's HTTP/2 connection. Door thread only.
  struct Wire {
    int fd = -1;
    nghttp2_session* session = nullptr;
    event* readable = nullptr;  // persistent, while the wire is open
    // Armed while output waits for the socket, with --send_timeout as its
    // timeout: a socket that takes nothing for that long is closed.
    event* writable = nullptr;
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
    // Armed while no call is open (MarkIdle), for options_.idle_timeout.
    event* idle_timer = nullptr;
    event* send_timer = nullptr;       // armed while an answer is being sent
    absl::flat_hash_set<Call*> calls;  // the open streams' calls
    // Read calls whose request has ended in the bytes being received:
    // started once nghttp2 has taken them all (StartReady), so that a
    // stream reset in the same bytes never takes an admission slot.
    std::vector<Call*> ready;
    // The request bytes its open calls hold (as request_bytes_ counts
    // them), at most connection_request_share_.
    int64_t request_bytes = 0;
    // The reads its calls hold, its Read calls' and its batches' alike
    // (max_reads_per_connection; shared with its batches, which may drain
    // after it has closed), and the bytes of its answers and ReadMany
    // items not yet sent (max_answer_bytes_per_connection).
    std::shared_ptr<ReadShare> reads;
    int64_t answer_bytes = 0;
    // The header block being decoded: its stream and its fields' bytes so
    // far (OnHeader), whether or not the stream has a call.
    int32_t header_block_stream = 0;
    int64_t header_block_bytes = 0;
    // What the client may send that carries no work (frame_budget.h).
    FrameBudget budget;
    // While no call is open: its place in idle_ (oldest first); at the
    // connection limit the one idle longest gives way.
    std::optional<std::list<Connection*>::iterator> idle_entry;
    bool settings_seen = false;  // the first SETTINGS is the handshake
  };

  // One call (an HTTP/2 stream). Door thread only. Owned by its
  // connection while the stream is open; once the stream has closed, by
  // the engine's callback if a read is still in flight.
  struct Call {
    enum class State {
      kReceiving,  // headers and message arriving
      kReady,      // the request has ended; started after this receive
      kReading,    // the engine has the read
      kAnswering,  // the answer is being sent
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
    int64_t header_bytes = 0;
    std::optional<absl::Duration> timeout;  // grpc-timeout
    absl::Time begun;  // its HEADERS arrived (the engine's clock)
    std::string body;  // the request's DATA
    // The read, from admission to delivery; finished when the call is
    // freed.
    ReadCall read;
    // What it counts in its connection's reads and answer_bytes (for a
    // ReadMany call, the items queued).
    bool counts_read = false;
    int64_t counted_answer_bytes = 0;
    // The framed answer message, sent from answer_sent on, then trailers.
    FramedReadResponse answer;
    size_t answer_sent = 0;
    // Set for a call of the door's own services (its :path is not Read).
    std::unique_ptr<ServiceCall> service;
    // Set for a ReadMany call.
    std::unique_ptr<BatchCall> batch;
  };

  // libevent callbacks (read_door_connections.cc); arg is the Connection.
  static void OnAccept(evconnlistener* listener, evutil_socket_t fd,
                       sockaddr* address, int length, void* arg) noexcept;
  static void OnReadable(evutil_socket_t fd, short what, void* arg) noexcept;
  static void OnWritable(evutil_socket_t fd, short what, void* arg) noexcept;
  static void OnHandshakeTimeout(evutil_socket_t, short, void* arg) noexcept;
  static void OnIdleTimeout(evutil_socket_t, short, void* arg) noexcept;
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
  // read_door_frames.cc: the frame budget's side of the callbacks.
  static int OnFrameSent(nghttp2_session* session, const nghttp2_frame* frame,
                         void* user_data) noexcept;
  // Every frame's header, before nghttp2 reads its payload (unknown frame
  // types included): counted against the budget (Spend); fails the
  // session once it is spent.
  static int OnBeginFrame(nghttp2_session* session,
                          const nghttp2_frame_hd* header,
                          void* user_data) noexcept;
  // Counts a received frame against the connection's budget; false once
  // it is spent, and then GOAWAY ENHANCE_YOUR_CALM is queued (the caller
  // fails the callback, which ends the connection).
  static bool Spend(nghttp2_session* session, Connection& connection,
                    const nghttp2_frame_hd& header);
  // Queues GOAWAY ENHANCE_YOUR_CALM with `debug_data`.
  static void EndForAbuse(nghttp2_session* session,
                          absl::string_view debug_data);
  // The answer's data source (read_door_calls.cc).
  static ssize_t ReadAnswer(nghttp2_session* session, int32_t stream_id,
                            uint8_t* buffer, size_t length,
                            uint32_t* data_flags, nghttp2_data_source* source,
                            void* user_data) noexcept;

  // Wires (read_door_connections.cc).
  // Hands nghttp2 what the socket has.
  static WireState Receive(Wire& wire);
  // Writes what nghttp2 has to send, as far as the socket takes it; arms
  // the writable event (with `stall` as its timeout) when the socket is
  // full.
  static WireState Send(Wire& wire, absl::Duration stall);
  static void FreeWire(Wire& wire);

  // Connections (read_door_connections.cc).
  // Tells the connection GOAWAY NO_ERROR, writes what the socket takes
  // now, and closes it (idle: at the limit, or past idle_timeout).
  void CloseIdle(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Writes what the connection has to send; closes it on an error or once
  // neither side has more to say. Nothing may touch the connection after
  // Flush.
  void Flush(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Frees the connection; its calls' reads in flight are cancelled.
  void Close(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The connection with no call open that has been idle longest; null if
  // every connection has a call open. O(1).
  Connection* LongestIdle() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The connection has no call open now (its idle timer runs) / has one
  // open.
  void MarkIdle(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void MarkBusy(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // The receive deadline (read_door_frames.cc): a sweep, once a second
  // while a Read call's request is arriving, fails those past
  // `receive_timeout` (or their grpc-timeout) with DEADLINE_EXCEEDED.
  void ArmReceiveSweep() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  static void OnReceiveSweep(evutil_socket_t, short, void* arg) noexcept;

  // Calls (read_door_calls.cc).
  // The request has ended: refuse it, or admit and submit its read.
  void Start(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Parses the call's one request message into `request` and frees its
  // bytes; false, with the call answered (INVALID_ARGUMENT, or the
  // framing's error), if it is not one.
  bool TakeRequest(Call* call, google::protobuf::MessageLite& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The request has ended in the bytes being received: refused at once, or
  // queued for StartReady.
  void EndRequest(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Starts the connection's ready calls (the receive is over).
  void StartReady(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
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
  // request_bytes_ (and its connection's).
  void ReleaseBody(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Counts `bytes` (negative: gives back) of the call's request against
  // request_bytes_ and, while the call has its connection, the
  // connection's share.
  void CountRequestBytes(Call* call, int64_t bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Whether `bytes` more request bytes fit the door's budget and the
  // connection's share.
  bool RequestBytesFit(const Connection& connection, int64_t bytes) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // ReadMany calls (read_door_batches.cc).
  // The request has ended: refuse it, or start its batch and its answer.
  void StartBatch(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The batch's read `index` is over: its item is queued.
  void OnBatchItem(Call* call, size_t index, ReadOutcome outcome)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The items of a batch (a data source), then OK trailers.
  static ssize_t ReadBatchItems(nghttp2_session* session, int32_t stream_id,
                                uint8_t* buffer, size_t length,
                                uint32_t* data_flags,
                                nghttp2_data_source* source,
                                void* user_data) noexcept;
  // The stream has closed: the batch's reads are cancelled; the call is
  // freed once they are drained (FreeLater).
  void DetachBatch(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Frees `call` on the next turn of the loop (never inside its batch's
  // own callbacks).
  void FreeLater(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void ScheduleFree() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  static void OnFreeLater(evutil_socket_t, short, void* arg) noexcept;
  void FreeQueued() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // A place in the connection's ReadShare came back while a batch of it
  // waited: its batches start more on the loop's next turn.
  void ResumeBatchesLater(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // A place in batch_reads_ came back while a batch waited: every batch
  // starts more on the loop's next turn.
  void ResumeAllBatchesLater() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Starts what `call`'s batch may start now, its items flushed on this
  // turn.
  void ResumeBatch(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Whether any batch has reads the engine has not completed.
  bool BatchReadsRunning() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Arms the connection's send timer for --send_timeout, unless armed.
  void ArmSendTimer(Connection* connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Calls of the door's own services (read_door_services.cc).
  // Makes `call` one if the door serves them and `path` names one.
  bool MakeServiceCall(Call* call, absl::string_view path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // A HEADERS or DATA frame of the call's request has been received.
  void ContinueServiceCall(Call* call, bool request_ended)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Answers the next whole reflection request, once the answer before it
  // has been taken by nghttp2; ends the stream after the client's.
  void ServeReflection(Call* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Response headers, with ReadServiceMessages as the message source.
  void SubmitServiceResponse(Call* call)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Ends the call with `status`: trailers alone if nothing was sent yet,
  // else trailers once the message being sent is out. The first end
  // stands.
  void EndServiceCall(Call* call, const absl::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // `message` has been taken by nghttp2: queues the next, if any.
  void NextServiceMessage(Call* call)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Free's part: the watch list, the answer bytes held.
  void ReleaseServiceCall(Call* call)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The serving state may have changed: each Watch following it is sent
  // the new status (replacing one the client has not taken yet).
  void PublishServing() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Teardown: every service call still open ends with `status`.
  void EndServiceCalls(const absl::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // The messages of a service call's answer (a data source).
  static ssize_t ReadServiceMessages(nghttp2_session* session,
                                     int32_t stream_id, uint8_t* buffer,
                                     size_t length, uint32_t* data_flags,
                                     nghttp2_data_source* source,
                                     void* user_data) noexcept;

  // Teardown (read_door.cc).
  void BeginTeardown() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  // Finishes the teardown once no read is left with the engine.
  void MaybeFinishTeardown() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);
  void FinishTeardown() ABSL_EXCLUSIVE_LOCKS_REQUIRED(door_thread_);

  // Constant after Bind.
  const ReadDoorOptions options_;
  const int64_t connection_request_share_;
  // The largest ReadMany request message.
  const int64_t batch_message_bytes_;
  // Every batch's reads (options_.max_batch_reads_in_flight); door thread.
  const std::shared_ptr<ReadShare> batch_reads_;
  ReadCore& core_;
  hedge::EventLoop& loop_;
  event_base* base_ = nullptr;  // the engine's
  ListenAddress address_;
  nghttp2_session_callbacks* callbacks_ = nullptr;
  nghttp2_option* session_options_ = nullptr;
  // While set, changes of options_.serving_state are posted to the loop
  // (PublishServing). Made by Start, reset by the destructor before the
  // teardown, on the thread that starts and destroys the door.
  services::ServingState::Subscription serving_subscription_;

  // The engine's loop thread (bound by Bind); the destructor's if the loop
  // is not running.
  hedge::ThreadChecker door_thread_;
  evconnlistener* listener_ ABSL_GUARDED_BY(door_thread_) = nullptr;
  std::unique_ptr<AcceptBackoff> accept_backoff_ ABSL_GUARDED_BY(door_thread_);
  absl::flat_hash_map<Connection*, std::unique_ptr<Connection>> connections_
      ABSL_GUARDED_BY(door_thread_);
  bool stopping_ ABSL_GUARDED_BY(door_thread_) = false;  // the destructor runs
  // Connections with no call open, the one idle longest first.
  std::list<Connection*> idle_ ABSL_GUARDED_BY(door_thread_);
  // Engine reads whose callback has not run yet.
  int64_t outstanding_ ABSL_GUARDED_BY(door_thread_) = 0;
  // The request bytes calls hold (their `body`, and kCallBytes for each
  // call), at most options_.max_request_bytes.
  int64_t request_bytes_ ABSL_GUARDED_BY(door_thread_) = 0;
  // The open health Watch calls.
  absl::flat_hash_set<Call*> watches_ ABSL_GUARDED_BY(door_thread_);
  // Connections closed at accept for the limit, so far.
  uint64_t refused_ ABSL_GUARDED_BY(door_thread_) = 0;
  uint64_t idle_closed_ ABSL_GUARDED_BY(door_thread_) = 0;
  event* receive_sweep_ ABSL_GUARDED_BY(door_thread_) = nullptr;
  // ReadMany calls with a batch, until it is drained.
  absl::flat_hash_set<Call*> batches_ ABSL_GUARDED_BY(door_thread_);
  // Calls to free, and connections with ReadMany items to write, on the
  // next turn of the loop (free_later_).
  std::vector<Call*> to_free_ ABSL_GUARDED_BY(door_thread_);
  absl::flat_hash_set<Connection*> to_flush_ ABSL_GUARDED_BY(door_thread_);
  // Connections whose batches wait for a place in their ReadShare that has
  // come back: resumed on the next turn (free_later_).
  absl::flat_hash_set<Connection*> to_resume_ ABSL_GUARDED_BY(door_thread_);
  bool resume_all_ ABSL_GUARDED_BY(door_thread_) = false;
  event* free_later_ ABSL_GUARDED_BY(door_thread_) = nullptr;
  bool teardown_finished_ ABSL_GUARDED_BY(door_thread_) = false;

  // Set on the loop thread once FinishTeardown has run; the destructor
  // waits for it.
  TeardownLatch torn_down_;
};

}  // namespace tailgate::server::read_door

#endif  // TAILGATE_SERVER_READ_DOOR_READ_DOOR_IMPL_H_
