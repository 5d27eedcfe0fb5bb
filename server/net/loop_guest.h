// What the front doors served on the process's loop thread
// (server/http_door, server/read_door; hedge/transport/event_loop.h) share to
// start and stop from another thread: running a step there and waiting for it,
// and the teardown a door's destructor runs there, with the latch it waits on
// until its last step has run.
//
// Example:
//   absl::Status bound = RunOnLoopAndWait(loop, [&](event_base* base) {
//     return door->Bind(base);
//   });
//
// Thread safety: RunOnLoopAndWait from any thread but the loop's (it would
// wait for itself). TeardownLatch: Release from any thread, once; Wait from
// any other.

#ifndef TAILGATE_SERVER_NET_LOOP_GUEST_H_
#define TAILGATE_SERVER_NET_LOOP_GUEST_H_

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "hedge/sync/mutex.h"
#include "hedge/sync/thread_checker.h"
#include "hedge/transport/event_loop.h"

struct event_base;

namespace tailgate::server {

// Runs `step` on the loop thread, with the loop's event_base, and
// waits for its status; FAILED_PRECONDITION (and `step` never runs) if the
// loop is not running.
absl::Status RunOnLoopAndWait(
    hedge::EventLoop& loop, absl::AnyInvocable<absl::Status(event_base*)> step);

class TeardownLatch;

// A loop door's destruction, from the thread that started it: `begin` runs
// on the loop thread and must lead, there or in a later step, to
// latch.Release(); if the loop is not running (no callback can come any
// more), this thread takes `owner` over and runs `finish` instead. Returns
// once the latch is released.
void TearDownFromOutside(hedge::EventLoop& loop, hedge::ThreadChecker& owner,
                         absl::AnyInvocable<void()> begin,
                         absl::AnyInvocable<void()> finish,
                         TeardownLatch& latch);

class TeardownLatch {
 public:
  void Release() {
    hedge::MutexLock lock(&mu_);
    released_ = true;
    changed_.SignalAll();
  }

  void Wait() {
    hedge::MutexLock lock(&mu_);
    while (!released_) changed_.Wait(&mu_);
  }

 private:
  hedge::Mutex mu_;
  hedge::CondVar changed_;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_NET_LOOP_GUEST_H_
