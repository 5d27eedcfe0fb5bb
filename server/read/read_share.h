// ReadShare: one client connection's share of --max_requests: the reads
// its calls hold at once, Read calls and the reads of its ReadMany batches
// alike, at most `limit` (0: no limit of its own). A read holds its place
// from its admission until its answer has been sent or dropped.
//
// Shared by the connection and its batches (std::shared_ptr): a batch's
// reads may still be draining after the connection has closed. When a
// place comes back while a batch waits for one (set_waiting), `room` runs
// once, so that the door can start the waiting batch again on the loop's
// next turn; the door clears `room` when the connection closes.
//
// Example:
//   auto share = std::make_shared<ReadShare>(112);
//   if (!share->TryTake()) ...refuse, or wait...
//   ...the read's answer is sent...
//   share->Give();
//
// Thread safety: none. The door's thread (the engine's loop) only.

#ifndef TAILGATE_SERVER_READ_READ_SHARE_H_
#define TAILGATE_SERVER_READ_READ_SHARE_H_

#include <cstdint>
#include <utility>

#include "absl/functional/any_invocable.h"

namespace tailgate::server {

class ReadShare {
 public:
  explicit ReadShare(int64_t limit) : limit_(limit) {}
  ReadShare(const ReadShare&) = delete;
  ReadShare& operator=(const ReadShare&) = delete;

  // Takes a place; false (nothing taken) at the limit.
  bool TryTake() {
    if (limit_ > 0 && held_ >= limit_) return false;
    ++held_;
    return true;
  }
  // Gives a place back; runs `room` if a batch was waiting for one.
  void Give() {
    --held_;
    if (waiting_ && room_ != nullptr) {
      waiting_ = false;
      room_();
    }
  }
  // A batch found the share full with none of its own reads holding a
  // place: the next Give runs `room`.
  void set_waiting() { waiting_ = true; }
  void set_room(absl::AnyInvocable<void()> room) { room_ = std::move(room); }

  int64_t held() const { return held_; }
  int64_t limit() const { return limit_; }

 private:
  const int64_t limit_;
  int64_t held_ = 0;
  bool waiting_ = false;
  absl::AnyInvocable<void()> room_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_READ_READ_SHARE_H_
