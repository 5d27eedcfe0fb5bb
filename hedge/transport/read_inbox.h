// ReadInbox: how reads and cancellations cross from the callers' threads to
// the engine's loop thread.
//
// Callers Push reads and cancellations; each Push says whether the inbox
// was empty, so the caller wakes the loop only for the first item of a
// batch. The loop thread Takes everything queued at once. Close (loop
// thread, as it stops) takes what is left and refuses every later Push, so
// no read can be queued after the loop's last look.
//
// Thread safety: Push* are safe from any thread; Take and Close are for the
// loop thread (they are safe from any thread, but only the loop may act on
// what they return).

#ifndef TAILGATE_HEDGE_TRANSPORT_READ_INBOX_H_
#define TAILGATE_HEDGE_TRANSPORT_READ_INBOX_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "hedge/sync/mutex.h"
#include "hedge/transport/read_state.h"

namespace tailgate::hedge::transport {

class ReadInbox {
 public:
  struct Batch {
    std::vector<std::unique_ptr<Read>> reads;
    std::vector<uint64_t> cancelled;  // read ids
  };

  enum class PushResult {
    kQueued,        // the inbox already held work: the loop is being woken
    kQueuedWakeUp,  // the first item: the caller must wake the loop
    kClosed,        // refused: the loop has stopped; `read` is returned
  };

  // Queues `read`. On kClosed `read` is left untouched (still owned by
  // the caller).
  PushResult PushRead(std::unique_ptr<Read>& read);
  // Queues a cancellation; after Close it is dropped (kClosed).
  PushResult PushCancel(uint64_t read_id);

  // Everything queued, in arrival order per kind.
  Batch Take();
  // Everything queued; from now on every Push is refused.
  Batch Close();

 private:
  PushResult Queued() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Mutex mu_;
  Batch queued_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_READ_INBOX_H_
