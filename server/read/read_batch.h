// ReadBatch: the reads of one ReadMany call (a multi-get), each a ReadCall
// of its own (read_call.h): validated, admitted, hedged and budgeted as a
// Read, its answer held against --max_buffered_bytes until the door has
// sent its item. The batch only decides when each read starts:
//
//   - in order, as long as fewer than `max_in_flight` of its reads hold an
//     admission slot (0: no window of its own);
//   - a read that admission refuses for want of room (--max_requests,
//     --max_buffered_bytes, the engine's own max_requests) while the batch
//     holds slots waits for one of them to come back (Sent), instead of
//     failing: a batch takes as many slots at once as admission allows and
//     no more. With no slot of its own held, the refusal is the item's;
//   - a read whose descriptor is wrong, or whose upstream is unknown,
//     fails its own item at once (INVALID_ARGUMENT, NOT_FOUND); so does
//     every read not yet started once the call's deadline has passed
//     (DEADLINE_EXCEEDED).
//
// A batch given ReadShares (read_share.h: its connection's, the door's
// for all batch reads) counts each read it holds in each, as a Read call
// is counted in its connection's: a read that finds one full waits, as
// for admission, for a place to come back (one of the batch's own, or,
// the door's Resume, one of another call's); it never fails for it.
//
// The batch's reads earn their hedge credit into the batch's own and
// spend it first (hedge/policy/batch_credits.h): reads admitted together
// are not held to the budget's burst.
//
// Each read's outcome is handed to the door as an item (`ready`: its index
// and outcome, an answer or a ReadError), in completion order; the door
// sends it and calls Sent(index), which finishes the read (its slot and
// its answer's bytes back) and lets the next start.
//
// ClientGone (the call was cancelled, or its stream closed) cancels the
// reads in flight, finishes those handed over and not sent, and starts no
// more; from then on outcomes are not handed to the door, and `drained`
// runs once no read is left with the engine (at once if none is). Shutdown (the
// door stops) cancels the reads in flight as shutting down (their items say
// UNAVAILABLE) and starts no more.
//
// Example (a door, on the engine's loop thread):
//   auto batch = std::make_unique<ReadBatch>(
//       core, std::move(request), deadline,
//       [call](size_t index, ReadOutcome outcome) { ...queue the item... },
//       [call] { ...free the call... });
//   batch->Start();
//   ... once item `index` is written: batch->Sent(index);
//   if (batch->done()) ...end the call with OK...
//
// Thread safety: none. Every method, and both callbacks, on one thread:
// the engine's loop thread (read completions run there). `ready` may call
// Sent, but not destroy the batch; `drained` may destroy it. Destroy it
// only once done(), or from `drained`.

#ifndef TAILGATE_SERVER_READ_READ_BATCH_H_
#define TAILGATE_SERVER_READ_READ_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "hedge/policy/batch_credits.h"
#include "proto/tailgate/v1/tailgate.pb.h"
#include "server/read/read_call.h"
#include "server/read/read_share.h"

namespace tailgate::server {

class ReadBatch {
 public:
  using ItemReady = absl::AnyInvocable<void(size_t index, ReadOutcome outcome)>;
  using Drained = absl::AnyInvocable<void()>;

  // `call_deadline` on the system clock (InfiniteFuture: none). `shares`:
  // where each read takes a place (none: no share).
  ReadBatch(ReadCore& core, v1::ReadManyRequest request,
            absl::Time call_deadline, ItemReady ready, Drained drained,
            std::vector<std::shared_ptr<ReadShare>> shares = {});
  // Finishes every read still holding a slot (and its place in the
  // share). REQUIRES: none with the engine (done(), or `drained` has run).
  ~ReadBatch();
  ReadBatch(const ReadBatch&) = delete;
  ReadBatch& operator=(const ReadBatch&) = delete;

  // Starts the batch. A batch whose first read finds no room in admission
  // (--max_requests, --max_buffered_bytes) before any item was handed over
  // is refused whole: the refusal is returned (counted once), no item is
  // handed over, and nothing more starts; destroy the batch.
  std::optional<ReadError> Start();
  // Starts what the window, admission and the share allow now (a place in
  // the share may have come back).
  void Resume() { StartMore(); }
  // While paused (its client has not taken the items it has), the batch
  // starts no read; unpausing starts what may start.
  void set_paused(bool paused) {
    paused_ = paused;
    if (!paused_) StartMore();
  }
  bool paused() const { return paused_; }
  // Item `index` was sent (or dropped): its read is finished.
  void Sent(size_t index);
  void ClientGone();
  void Shutdown();

  size_t size() const { return items_.size(); }
  // Every item was handed to the door and sent.
  bool done() const { return sent_ == items_.size(); }
  // Reads the engine has.
  size_t running() const { return running_; }

 private:
  enum class State { kWaiting, kRunning, kReady, kSent };
  struct Item {
    State state = State::kWaiting;
    std::unique_ptr<ReadCall> call;  // from its start until Sent
  };

  // Starts reads while the window and admission allow.
  void StartMore();
  void Complete(size_t index, ReadOutcome outcome);
  // Hands item `index` to the door.
  void Ready(size_t index, ReadOutcome outcome);
  // Runs `drained` once, when the client has gone and no read is left.
  void MaybeDrained();
  // A place in every share, or in none (false: the full ones are told a
  // batch waits).
  bool TakePlaces();
  void GivePlaces();

  ReadCore& core_;
  const v1::ReadManyRequest request_;
  const absl::Time call_deadline_;
  ItemReady ready_;
  Drained drained_;
  std::vector<Item> items_;
  const std::vector<std::shared_ptr<ReadShare>> shares_;
  const std::shared_ptr<hedge::BatchCredits> credits_ =
      std::make_shared<hedge::BatchCredits>();
  size_t next_ = 0;     // the next read to start
  size_t holding_ = 0;  // reads holding a slot: started, not yet sent
  size_t running_ = 0;  // reads the engine has
  size_t sent_ = 0;
  bool stopped_ = false;      // ClientGone or Shutdown: no more starts
  bool client_gone_ = false;  // outcomes are no longer handed over
  bool starting_ = false;     // inside StartMore
  bool cancelling_ = false;   // inside ClientGone
  bool handed_over_ = false;  // an item was handed to the door
  bool paused_ = false;
  std::optional<ReadError> refused_whole_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_READ_READ_BATCH_H_
