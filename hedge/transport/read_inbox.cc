#include "hedge/transport/read_inbox.h"

#include <utility>

namespace tailgate::hedge::transport {

ReadInbox::PushResult ReadInbox::Queued() const {
  return queued_.reads.size() + queued_.cancelled.size() == 1
             ? PushResult::kQueuedWakeUp
             : PushResult::kQueued;
}

ReadInbox::PushResult ReadInbox::PushRead(std::unique_ptr<Read>& read) {
  MutexLock lock(&mu_);
  if (closed_) return PushResult::kClosed;
  queued_.reads.push_back(std::move(read));
  return Queued();
}

ReadInbox::PushResult ReadInbox::PushCancel(uint64_t read_id) {
  MutexLock lock(&mu_);
  if (closed_) return PushResult::kClosed;
  queued_.cancelled.push_back(read_id);
  return Queued();
}

ReadInbox::Batch ReadInbox::Take() {
  MutexLock lock(&mu_);
  return std::exchange(queued_, Batch());
}

ReadInbox::Batch ReadInbox::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
  return std::exchange(queued_, Batch());
}

}  // namespace tailgate::hedge::transport
