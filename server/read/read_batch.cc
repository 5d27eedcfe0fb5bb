#include "server/read/read_batch.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace tailgate::server {
namespace {

// Refusals for want of room, which a batch holding slots waits out.
bool WantsRoom(ReadEnd end) {
  return end == ReadEnd::kTooManyCalls || end == ReadEnd::kBufferFull ||
         end == ReadEnd::kOverloaded;
}

}  // namespace

ReadBatch::ReadBatch(ReadCore& core, v1::ReadManyRequest request,
                     absl::Time call_deadline, ItemReady ready, Drained drained,
                     std::vector<std::shared_ptr<ReadShare>> shares)
    : core_(core),
      request_(std::move(request)),
      call_deadline_(call_deadline),
      ready_(std::move(ready)),
      drained_(std::move(drained)),
      items_(static_cast<size_t>(request_.reads_size())),
      shares_(std::move(shares)) {}

ReadBatch::~ReadBatch() {
  for (Item& item : items_) {
    if (item.call == nullptr) continue;
    item.call.reset();
    GivePlaces();
  }
}

bool ReadBatch::TakePlaces() {
  for (size_t taken = 0; taken < shares_.size(); ++taken) {
    if (shares_[taken]->TryTake()) continue;
    shares_[taken]->set_waiting();
    while (taken > 0) shares_[--taken]->Give();
    return false;
  }
  return true;
}

void ReadBatch::GivePlaces() {
  for (const std::shared_ptr<ReadShare>& share : shares_) share->Give();
}

std::optional<ReadError> ReadBatch::Start() {
  StartMore();
  return std::move(refused_whole_);
}

void ReadBatch::StartMore() {
  if (starting_) return;  // an item handed over inside was sent at once
  starting_ = true;
  const size_t window = request_.max_in_flight();
  while (next_ < items_.size() && !stopped_ && !paused_ &&
         (window == 0 || holding_ < window)) {
    const size_t index = next_;
    if (absl::Now() >= call_deadline_) {
      ++next_;
      Ready(index, {.error = MakeReadError(
                        ReadEnd::kDeadlineExceeded,
                        "the call's deadline passed before this read began")});
      continue;
    }
    if (!TakePlaces()) {
      // A share is full: a place coming back (Sent, or the door's Resume)
      // starts the rest.
      break;
    }
    auto call = std::make_unique<ReadCall>(core_);
    std::optional<ReadError> refused = call->Start(
        request_.reads(static_cast<int>(index)), call_deadline_,
        [this, index](ReadOutcome outcome) {
          Complete(index, std::move(outcome));
        },
        credits_);
    if (refused.has_value()) {
      GivePlaces();
      if (WantsRoom(refused->end) && holding_ > 0) break;  // Sent retries
      if (WantsRoom(refused->end) && !handed_over_) {
        refused_whole_ = *std::move(refused);
        stopped_ = true;
        break;
      }
      ++next_;
      Ready(index, {.error = *std::move(refused)});
      continue;
    }
    ++next_;
    ++holding_;
    ++running_;
    items_[index].state = State::kRunning;
    items_[index].call = std::move(call);
  }
  starting_ = false;
}

void ReadBatch::Complete(size_t index, ReadOutcome outcome) {
  --running_;
  if (client_gone_) {
    Sent(index);  // nobody to hand it to: finished here
    MaybeDrained();
    return;
  }
  Ready(index, std::move(outcome));
}

void ReadBatch::Ready(size_t index, ReadOutcome outcome) {
  handed_over_ = true;
  items_[index].state = State::kReady;
  ready_(index, std::move(outcome));
}

void ReadBatch::Sent(size_t index) {
  Item& item = items_[index];
  if (item.state == State::kSent) return;
  item.state = State::kSent;
  ++sent_;
  if (item.call != nullptr) {
    item.call.reset();  // finishes the read: its slot and bytes go back
    --holding_;
    GivePlaces();
  }
  StartMore();
}

void ReadBatch::ClientGone() {
  if (client_gone_) return;
  stopped_ = true;
  client_gone_ = true;
  // A cancelled read may complete inside ClientGone (never with the real
  // engine, whose cancels are queued): `drained` waits for the loop's end.
  cancelling_ = true;
  for (size_t index = 0; index < items_.size(); ++index) {
    Item& item = items_[index];
    if (item.state == State::kRunning) {
      item.call->ClientGone();
    } else if (item.state == State::kReady) {
      Sent(index);  // handed over, never to be sent: finished now
    }
  }
  cancelling_ = false;
  MaybeDrained();
}

void ReadBatch::MaybeDrained() {
  if (!client_gone_ || running_ > 0 || cancelling_ || drained_ == nullptr) {
    return;
  }
  Drained drained = std::move(drained_);
  drained_ = nullptr;
  drained();  // may destroy the batch: nothing touches `this` after it
}

void ReadBatch::Shutdown() {
  stopped_ = true;
  for (Item& item : items_) {
    if (item.state == State::kRunning) item.call->Shutdown();
  }
}

}  // namespace tailgate::server
