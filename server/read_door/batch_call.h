// BatchCall: what a HedgedRead.ReadMany call holds besides its Call
// (read_door_impl.h): its reads (a ReadBatch, server/read/read_batch.h) and
// the items they have produced, framed, waiting to be sent in completion
// order (read_door_batches.cc).
//
// What one costs, bounded whatever the client does:
//   - its request (at most max_batch_message_bytes) until the batch is
//     parsed, counted against max_request_bytes as a Read's is;
//   - each read a ReadCall of its own: an admission slot and its answer's
//     bytes against --max_buffered_bytes from its completion until its
//     item has been taken by nghttp2, so the items waiting are bounded by
//     --max_buffered_bytes, --max_requests and the batch's max_in_flight;
//   - the item being sent must be taken within --send_timeout, or the
//     stream is reset and the batch's reads cancelled.
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

struct BatchCall {
  struct Item {
    size_t index;
    FramedReadResponse message;
  };

  std::unique_ptr<ReadBatch> reads;  // set once the request has ended
  // Items not yet taken by nghttp2; the front one is being sent, from
  // front_sent on.
  std::deque<Item> items;
  size_t front_sent = 0;
  // When the item being sent must have been taken (--send_timeout);
  // InfiniteFuture while nothing waits.
  absl::Time send_deadline = absl::InfiniteFuture();
  // Inside the data source: an item handed over there is not flushed.
  bool sending = false;
  // The stream has closed; the call waits for the batch to drain.
  bool detached = false;
};

}  // namespace tailgate::server::read_door

#endif  // TAILGATE_SERVER_READ_DOOR_BATCH_CALL_H_
