// ReadDoor's lifecycle: Start binds the listener on the engine's loop; the
// destructor cancels the reads still in flight and, once the engine has
// completed them, closes every connection there (read_door_impl.h).

#include "server/read_door/read_door.h"

#include <event2/event.h>
#include <event2/listener.h>
#include <nghttp2/nghttp2.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "server/net/listen_socket.h"
#include "server/net/loop_guest.h"
#include "server/read/read_error.h"
#include "server/read_door/grpc_wire.h"
#include "server/read_door/read_door_impl.h"

namespace tailgate::server::read_door {

ReadDoor::Impl::Impl(const ReadDoorOptions& options, ReadCore& core,
                     hedge::EventLoop& loop)
    : options_(options),
      connection_request_share_(std::min(
          options.max_request_bytes,
          std::max(options.max_request_bytes / kConnectionShareDivisor,
                   kCallBytes + static_cast<int64_t>(kMessagePrefixBytes) +
                       options.max_message_bytes))),
      batch_message_bytes_(
          std::max(options.max_message_bytes,
                   std::min(int64_t{options.max_batch_reads} << 10,
                            connection_request_share_ - kCallBytes -
                                static_cast<int64_t>(kMessagePrefixBytes)))),
      batch_reads_(
          std::make_shared<ReadShare>(options.max_batch_reads_in_flight)),
      core_(core),
      loop_(loop) {
  batch_reads_->set_room([this] {
    door_thread_.AssertOnOwner();
    ResumeAllBatchesLater();
  });
}

absl::Status ReadDoor::Impl::Bind(event_base* base) {
  door_thread_.BindToCurrentThread();
  door_thread_.AssertOnOwner();
  base_ = base;
  if (nghttp2_session_callbacks_new(&callbacks_) != 0 ||
      nghttp2_option_new(&session_options_) != 0) {
    return absl::ResourceExhaustedError("cannot set up HTTP/2");
  }
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks_,
                                                          &OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(callbacks_, &OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks_,
                                                            &OnDataChunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks_, &OnFrame);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks_,
                                                         &OnStreamClose);
  nghttp2_session_callbacks_set_on_frame_send_callback(callbacks_,
                                                       &OnFrameSent);
  nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks_,
                                                        &OnBeginFrame);
  // Frames of types HTTP/2 does not define are taken in as extensions, so
  // that OnBeginFrame counts them against the frame budget, then dropped
  // unread (nghttp2 would skip them without a callback).
  for (int type = NGHTTP2_CONTINUATION + 1; type <= 0xff; ++type) {
    nghttp2_option_set_user_recv_extension_type(session_options_,
                                                static_cast<uint8_t>(type));
  }
  nghttp2_session_callbacks_set_on_extension_chunk_recv_callback(
      callbacks_, [](nghttp2_session*, const nghttp2_frame_hd*, const uint8_t*,
                     size_t, void*) { return 0; });
  nghttp2_session_callbacks_set_unpack_extension_callback(
      callbacks_, [](nghttp2_session*, void**, const nghttp2_frame_hd*, void*) {
        return static_cast<int>(NGHTTP2_ERR_CANCEL);
      });
  // A server is never pushed to: no reserved streams to keep.
  nghttp2_option_set_max_reserved_remote_streams(session_options_, 0);
  // Closed streams are freed at once instead of kept for RFC 7540's
  // priority tree, which the door does not use: kept, they held up to
  // --max_streams_per_connection stream objects per connection.
  nghttp2_option_set_no_closed_streams(session_options_, 1);
  // gRPC metadata values are any printable ASCII, 0x20-0x7E, spaces at
  // either end included (PROTOCOL-HTTP2.md), which RFC 9113 would reject.
  nghttp2_option_set_no_rfc9113_leading_and_trailing_ws_validation(
      session_options_, 1);

  absl::StatusOr<int> fd = OpenListeningSocket(options_.address);
  if (!fd.ok()) return fd.status();
  address_ = options_.address;
  if (!address_.is_unix) {
    absl::StatusOr<int> port = LocalPort(*fd);
    if (!port.ok()) {
      close(*fd);
      return port.status();
    }
    address_ = address_.WithPort(*port);
  }
  receive_sweep_ = evtimer_new(base_, &Impl::OnReceiveSweep, this);
  free_later_ = evtimer_new(base_, &Impl::OnFreeLater, this);
  if (receive_sweep_ == nullptr || free_later_ == nullptr) {
    close(*fd);
    return absl::ResourceExhaustedError("cannot set up the receive timer");
  }
  listener_ = evconnlistener_new(base_, &Impl::OnAccept, this,
                                 LEV_OPT_CLOSE_ON_FREE, kListenBacklog, *fd);
  if (listener_ == nullptr) {
    close(*fd);
    return absl::InternalError("cannot serve reads on the listening socket");
  }
  accept_backoff_ = AcceptBackoff::Install(listener_, base_, absl::Seconds(1),
                                           options_.accept_failed);
  return absl::OkStatus();
}

ReadDoor::Impl::~Impl() {
  // No change is posted from here on; those posted already run before the
  // teardown's first step.
  serving_subscription_.Reset();
  TearDownFromOutside(
      loop_, door_thread_,
      [this] {
        door_thread_.AssertOnOwner();
        BeginTeardown();
      },
      [this] {
        door_thread_.AssertOnOwner();
        FinishTeardown();
      },
      torn_down_);
}

// No new connection from here on. Streams of the door's own services end
// with a status (a client told UNAVAILABLE retries elsewhere; a dropped
// socket says nothing). Reads still in flight (a drain that timed out) are
// cancelled; once the engine has completed them (Deliver, which answers
// UNAVAILABLE), FinishTeardown closes the rest: the engine must not call
// back into a freed door.
void ReadDoor::Impl::BeginTeardown() {
  stopping_ = true;
  accept_backoff_.reset();
  if (listener_ != nullptr) evconnlistener_free(listener_);
  listener_ = nullptr;
  EndServiceCalls(ShuttingDownError().status);
  for (auto& [key, connection] : connections_) {
    for (Call* call : connection->calls) {
      if (call->state == Call::State::kReading) call->read.Shutdown();
    }
  }
  for (Call* call : batches_) call->batch->reads->Shutdown();
  MaybeFinishTeardown();
}

void ReadDoor::Impl::MaybeFinishTeardown() {
  if (!teardown_finished_ && outstanding_ == 0 && !BatchReadsRunning()) {
    FinishTeardown();
  }
}

void ReadDoor::Impl::FinishTeardown() {
  teardown_finished_ = true;
  batch_reads_->set_room(nullptr);
  if (free_later_ != nullptr) event_free(free_later_);
  free_later_ = nullptr;
  if (receive_sweep_ != nullptr) event_free(receive_sweep_);
  receive_sweep_ = nullptr;
  accept_backoff_.reset();
  if (listener_ != nullptr) evconnlistener_free(listener_);
  listener_ = nullptr;
  // Each connection is told GOAWAY (no stream after the last one seen),
  // written as far as the socket takes it now, and closed.
  std::vector<Connection*> open;
  for (auto& [key, connection] : connections_) open.push_back(key);
  for (Connection* connection : open) {
    if (connection->wire.session != nullptr &&
        nghttp2_session_terminate_session(connection->wire.session,
                                          NGHTTP2_NO_ERROR) == 0) {
      Flush(connection);  // closes it once GOAWAY is written
    }
    if (connections_.contains(connection)) Close(connection);
  }
  FreeQueued();  // batch calls drained as their connections closed
  if (session_options_ != nullptr) nghttp2_option_del(session_options_);
  if (callbacks_ != nullptr) nghttp2_session_callbacks_del(callbacks_);
  session_options_ = nullptr;
  callbacks_ = nullptr;
  torn_down_.Release();
}

absl::StatusOr<std::unique_ptr<ReadDoor>> ReadDoor::Start(
    const ReadDoorOptions& options, ReadCore& core, hedge::EventLoop& loop) {
  auto impl = std::make_unique<Impl>(options, core, loop);
  Impl* door = impl.get();
  absl::Status bound = RunOnLoopAndWait(
      loop, [door](event_base* base) { return door->Bind(base); });
  if (!bound.ok()) return bound;
  door->FollowServing();
  return std::unique_ptr<ReadDoor>(new ReadDoor(std::move(impl)));
}

ReadDoor::ReadDoor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ReadDoor::~ReadDoor() = default;

const ListenAddress& ReadDoor::address() const { return impl_->address(); }

}  // namespace tailgate::server::read_door
