// BatchCall: what a HedgedRead.ReadMany call holds besides its Call
// (read_door_impl.h): its reads (a ReadBatch, server/read/read_batch.h) and
// the items they have produced, framed, waiting to be sent in completion
// order (read_door_batches.cc).
//
// What one costs, bounded whatever the client does:
//   - its request (at most max_batch_message_bytes) until the batch is
//     parsed, counted against max_request_bytes as a Read's is; then,
//     until the call is freed (its reads drained), the batch's own state:
//     the parsed request's memory (SpaceUsedLong) and kBatchReadBytes for
//     each read, charged to
//     max_request_bytes and the connection's share of it before the batch
//     starts (refused whole, RESOURCE_EXHAUSTED, if it does not fit);
//   - each read a ReadCall of its own: an admission slot and a place in
//     its connection's ReadShare (as a Read call's), and its answer's
//     bytes against --max_buffered_bytes and the connection's answer share
//     from its completion until its item has been taken by nghttp2 (an
//     answer past the connection's share is dropped: its item fails
//     RESOURCE_EXHAUSTED);
//   - each item must be taken whole within --send_timeout of its queueing,
//     however the client doles out its window, or the stream is reset and
//     the batch's reads cancelled.
//
// Thread safety: door thread only, as the Call.

#ifndef TAILGATE_SERVER_READ_DOOR_BATCH_CALL_H_
#define TAILGATE_SERVER_READ_DOOR_BATCH_CALL_H_

#include <cstddef>
#include <deque>
#include <memory>

#include "absl/time/time.h"
#include "server/read/read_batch.h"
#include "server/read_door/read_response_wire.h"

namespace tailgate::server::read_door {

// What a batch's state costs for each of its reads besides its parsed
// descriptor: the read's slot in the batch (16 bytes) and its share of
// the batch's bookkeeping, rounded up. A read's ReadCall, while it runs,
// is bounded by --max_requests, not by the batch.
inline constexpr int64_t kBatchReadBytes = 64;

struct BatchCall {
  struct Item {
    size_t index;
    FramedReadResponse message;
    absl::Time queued;  // must be taken by queued + --send_timeout
    // What it counts in its connection's answer_bytes.
    int64_t counted_bytes = 0;
  };

  std::unique_ptr<ReadBatch> reads;  // set once the request has ended
  // Items not yet taken by nghttp2; the front one is being sent, from
  // front_sent on.
  std::deque<Item> items;
  size_t front_sent = 0;
  // When the item being sent must have been taken (its queueing plus
  // --send_timeout); InfiniteFuture while nothing waits.
  absl::Time send_deadline = absl::InfiniteFuture();
  // Charged to the door's request bytes from the start until the call is
  // freed.
  int64_t charged_bytes = 0;
  // Inside the data source: an item handed over there is not flushed.
  bool sending = false;
  // The stream has closed; the call waits for the batch to drain.
  bool detached = false;
};

}  // namespace tailgate::server::read_door

#endif  // TAILGATE_SERVER_READ_DOOR_BATCH_CALL_H_
