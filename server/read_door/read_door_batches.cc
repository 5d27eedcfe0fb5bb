// HedgedRead.ReadMany at the read door: the request (a ReadManyRequest)
// becomes a ReadBatch (server/read/read_batch.h), whose items are framed
// as ReadManyItem messages and sent in completion order on the call's
// stream, then OK trailers. See batch_call.h for what a call may hold.
//
// A batch is never freed from inside its own callbacks: once its client
// has gone and its reads are drained, the call is queued and freed on the
// next turn of the loop (OnFreeLater), which also finishes a teardown that
// waited for batches. Items are written on that turn too, all the items
// of a connection that completed in one turn in one write.

#include <event2/event.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "proto/tailgate/v1/tailgate.pb.h"
#include "server/read/read_error.h"
#include "server/read_door/batch_call.h"
#include "server/read_door/grpc_response.h"
#include "server/read_door/grpc_wire.h"
#include "server/read_door/read_door_impl.h"

namespace tailgate::server::read_door {

void ReadDoor::Impl::StartBatch(Call* call) {
  v1::ReadManyRequest request;
  if (!TakeRequest(call, request)) return;
  if (request.reads_size() > options_.max_batch_reads) {
    core_.CountRejection(RejectReason::kInvalidArgument);
    Answer(call, absl::InvalidArgumentError(absl::StrCat(
                     "reads: ", request.reads_size(),
                     " reads in one ReadMany; at most ",
                     options_.max_batch_reads, " (--max_batch_reads)")));
    return;
  }
  if (core_.draining()) {
    core_.CountRejection(RejectReason::kDraining);
    Answer(call,
           MakeReadError(ReadEnd::kDraining, "server is draining").status);
    return;
  }
  // The batch's state, for as long as the call lives (its reads drained),
  // counts against the request memory as a request being received does:
  // a batch that does not fit is refused whole, and counted once.
  const int64_t charge = static_cast<int64_t>(request.SpaceUsedLong()) +
                         kBatchReadBytes * int64_t{request.reads_size()};
  if (!RequestBytesFit(*call->connection, charge)) {
    core_.CountRejection(RejectReason::kTooManyCalls);
    Answer(call,
           absl::ResourceExhaustedError(absl::StrCat(
               "a ReadMany of ", request.reads_size(), " reads holds ", charge,
               " bytes until its reads are over; the sidecar holds "
               "as many request bytes as it may, in all "
               "(--max_grpc_memory_bytes ",
               options_.max_request_bytes, ") or for this connection (",
               connection_request_share_, "); try again")));
    return;
  }
  CountRequestBytes(call, charge);
  call->batch->charged_bytes = charge;
  // A batch runs at most as many reads at once as one connection may.
  const int64_t per_connection = options_.max_reads_per_connection;
  if (per_connection > 0 && (request.max_in_flight() == 0 ||
                             request.max_in_flight() > per_connection)) {
    request.set_max_in_flight(static_cast<uint32_t>(per_connection));
  }
  const absl::Time deadline = call->timeout.has_value()
                                  ? absl::Now() + *call->timeout
                                  : absl::InfiniteFuture();
  call->state = Call::State::kAnswering;
  BatchCall& batch = *call->batch;
  batch.reads = std::make_unique<ReadBatch>(
      core_, std::move(request), deadline,
      [this, call](size_t index, ReadOutcome outcome) {
        door_thread_.AssertOnOwner();
        OnBatchItem(call, index, std::move(outcome));
      },
      [this, call] {
        door_thread_.AssertOnOwner();
        FreeLater(call);
      },
      std::vector<std::shared_ptr<ReadShare>>{call->connection->reads,
                                              batch_reads_});
  batches_.insert(call);
  // Items of reads refused at once are queued inside; the caller flushes.
  batch.sending = true;
  std::optional<ReadError> refused = batch.reads->Start();
  batch.sending = false;
  if (refused.has_value()) {
    // No room for its first read: the call is refused whole (trailers
    // only), its reads never started.
    batches_.erase(call);
    batch.reads.reset();
    Answer(call, refused->status);
    return;
  }
  nghttp2_data_provider items;
  items.source.ptr = call;
  items.read_callback = &Impl::ReadBatchItems;
  if (SubmitResponseHeaders(call->connection->wire.session, call->stream_id,
                            items) != 0) {
    nghttp2_submit_rst_stream(call->connection->wire.session, NGHTTP2_FLAG_NONE,
                              call->stream_id, NGHTTP2_INTERNAL_ERROR);
  }
}

void ReadDoor::Impl::OnBatchItem(Call* call, size_t index,
                                 ReadOutcome outcome) {
  BatchCall& batch = *call->batch;
  Connection* connection = call->connection;
  const auto wire_index = static_cast<uint32_t>(index);
  FramedReadResponse message =
      outcome.answer.has_value()
          ? FrameReadManyItem(wire_index, *std::move(outcome.answer))
          : FrameReadManyFailure(wire_index, outcome.error.status);
  // An item counts in its connection's answer share, as a Read's answer
  // does; one past the share is dropped (its read finished at once) and
  // its item says so.
  auto bytes = static_cast<int64_t>(message.size());
  if (outcome.answer.has_value() &&
      options_.max_answer_bytes_per_connection > 0 &&
      connection->answer_bytes + bytes >
          options_.max_answer_bytes_per_connection) {
    batch.reads->Sent(index);
    core_.CountDropped(DropReason::kBufferFull);
    message = FrameReadManyFailure(
        wire_index,
        MakeReadError(
            ReadEnd::kBufferFull,
            absl::StrCat("answers waiting for this connection's client are "
                         "at its share of --max_buffered_bytes (",
                         options_.max_answer_bytes_per_connection, ")"))
            .status);
    bytes = static_cast<int64_t>(message.size());
  }
  connection->answer_bytes += bytes;
  call->counted_answer_bytes += bytes;
  // Its client holds as many answer bytes as it may: the batch starts no
  // more reads until it has taken some (ReadBatchItems), rather than fetch
  // answers only to drop them.
  if (options_.max_answer_bytes_per_connection > 0 &&
      connection->answer_bytes >= options_.max_answer_bytes_per_connection) {
    batch.reads->set_paused(true);
  }
  const absl::Time now = absl::Now();
  if (batch.items.empty()) {
    batch.send_deadline = now + options_.send_timeout;
    ArmSendTimer(connection);
  }
  batch.items.push_back({index, std::move(message), now, bytes});
  if (stopping_) ScheduleFree();  // a teardown may be waiting for it
  if (batch.sending) return;      // nghttp2 is taking items now, or will be
  nghttp2_session_resume_data(connection->wire.session, call->stream_id);
  // Written on the loop's next turn, with every other item that completes
  // in this one: one write for many items, not one each.
  to_flush_.insert(connection);
  ScheduleFree();
}

ssize_t ReadDoor::Impl::ReadBatchItems(nghttp2_session* session,
                                       int32_t stream_id, uint8_t* buffer,
                                       size_t length, uint32_t* data_flags,
                                       nghttp2_data_source* source,
                                       void* user_data) noexcept {
  auto* connection = static_cast<Connection*>(user_data);
  Impl* self = connection->door;
  self->door_thread_.AssertOnOwner();
  auto* call = static_cast<Call*>(source->ptr);
  BatchCall& batch = *call->batch;
  size_t copied = 0;
  batch.sending = true;
  while (copied < length && !batch.items.empty()) {
    BatchCall::Item& item = batch.items.front();
    const size_t n = item.message.CopyOut(batch.front_sent, buffer + copied,
                                          length - copied);
    copied += n;
    batch.front_sent += n;
    if (batch.front_sent < item.message.size()) break;
    // Taken whole: the read is finished (its slot and bytes go back) and
    // the next may start. The next item's deadline counts from its own
    // queueing: a window doled out a few bytes at a time does not extend
    // it.
    const size_t index = item.index;
    connection->answer_bytes -= item.counted_bytes;
    call->counted_answer_bytes -= item.counted_bytes;
    batch.items.pop_front();
    batch.front_sent = 0;
    batch.send_deadline = batch.items.empty() ? absl::InfiniteFuture()
                                              : batch.items.front().queued +
                                                    self->options_.send_timeout;
    // Room again, or none of its own items left to wait for (the share may
    // be full of the connection's other answers: one read at a time then).
    if (batch.reads->paused() &&
        (batch.items.empty() ||
         connection->answer_bytes <
             self->options_.max_answer_bytes_per_connection)) {
      batch.reads->set_paused(false);
    }
    batch.reads->Sent(index);
  }
  batch.sending = false;
  if (copied > 0) return static_cast<ssize_t>(copied);
  if (!batch.reads->done()) return NGHTTP2_ERR_DEFERRED;
  *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
  if (SubmitTrailers(session, stream_id, absl::OkStatus()) != 0) {
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // resets the stream
  }
  return 0;
}

void ReadDoor::Impl::DetachBatch(Call* call) {
  BatchCall& batch = *call->batch;
  // Framed items go (Detach took their bytes from the connection's answer
  // share); their reads are finished by ClientGone.
  batch.items.clear();
  call->counted_answer_bytes = 0;
  batch.send_deadline = absl::InfiniteFuture();
  batch.reads->ClientGone();  // `drained` queues the call to be freed
}

void ReadDoor::Impl::ResumeBatchesLater(Connection* connection) {
  to_resume_.insert(connection);
  ScheduleFree();
}

void ReadDoor::Impl::ResumeAllBatchesLater() {
  resume_all_ = true;
  ScheduleFree();
}

void ReadDoor::Impl::ResumeBatch(Call* call) {
  Connection* connection = call->connection;
  if (connection == nullptr) return;  // detached: it starts nothing more
  call->batch->sending = true;        // items queued inside are flushed below
  call->batch->reads->Resume();
  call->batch->sending = false;
  nghttp2_session_resume_data(connection->wire.session, call->stream_id);
  to_flush_.insert(connection);
}

void ReadDoor::Impl::FreeLater(Call* call) {
  batches_.erase(call);
  to_free_.push_back(call);
  ScheduleFree();
}

void ReadDoor::Impl::ScheduleFree() {
  if (free_later_ == nullptr) return;  // torn down: FinishTeardown frees
  const timeval now{0, 0};
  evtimer_add(free_later_, &now);
}

void ReadDoor::Impl::OnFreeLater(evutil_socket_t, short, void* arg) noexcept {
  auto* self = static_cast<Impl*>(arg);
  self->door_thread_.AssertOnOwner();
  // Batches waiting for a place in their connection's share start more
  // (their items are flushed below).
  std::vector<Connection*> to_resume(self->to_resume_.begin(),
                                     self->to_resume_.end());
  self->to_resume_.clear();
  std::vector<Call*> batches;
  if (self->resume_all_) {
    self->resume_all_ = false;
    batches.assign(self->batches_.begin(), self->batches_.end());
  } else {
    for (Connection* connection : to_resume) {
      if (!self->connections_.contains(connection)) continue;
      for (Call* call : connection->calls) {
        if (call->batch != nullptr && call->batch->reads != nullptr) {
          batches.push_back(call);
        }
      }
    }
  }
  for (Call* call : batches) {
    if (self->batches_.contains(call)) self->ResumeBatch(call);
  }
  std::vector<Connection*> to_flush(self->to_flush_.begin(),
                                    self->to_flush_.end());
  self->to_flush_.clear();
  for (Connection* connection : to_flush) {
    if (self->connections_.contains(connection)) self->Flush(connection);
  }
  self->FreeQueued();
  if (self->stopping_) self->MaybeFinishTeardown();
}

void ReadDoor::Impl::FreeQueued() {
  std::vector<Call*> calls = std::move(to_free_);
  to_free_.clear();
  for (Call* call : calls) Free(call);
}

bool ReadDoor::Impl::BatchReadsRunning() const {
  return std::any_of(batches_.begin(), batches_.end(), [](Call* call) {
    return call->batch->reads->running() > 0;
  });
}

}  // namespace tailgate::server::read_door
