// EventLoop: what a guest may do with the process's event-loop thread.
//
// The process owns one loop thread (hedge/transport/curl/curl_loop.h) and
// lends it: to the engine, which drives its transfers and timers there
// (Engine::Create), and to the front doors, which serve their connections
// there (server/net/loop_guest.h), so that a read never changes thread from
// the request's bytes to the answer's. A guest sees only this interface.
//
// Example:
//   absl::Status posted = loop.RunOnLoop([](event_base* base) {
//     // On the loop thread: create events on `base`.
//   });
//
// Thread safety: RunOnLoop is safe from any thread, the loop's included.

#ifndef TAILGATE_HEDGE_TRANSPORT_EVENT_LOOP_H_
#define TAILGATE_HEDGE_TRANSPORT_EVENT_LOOP_H_

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"

struct event_base;  // libevent's

namespace tailgate::hedge {

class EventLoop {
 public:
  // A guest's task: runs on the loop thread with the loop's event_base.
  using Task = absl::AnyInvocable<void(event_base*)>;

  virtual ~EventLoop() = default;

  // Runs `task` on the loop thread, in the loop's next iteration, with the
  // loop's event_base. Events the task creates on the base run their
  // callbacks on the loop thread, where they may submit and cancel reads;
  // they must not block, must never be touched from another thread (the
  // base has no lock), and must all be freed, on the loop thread, before
  // the loop stops. FAILED_PRECONDITION, and `task` never runs, if the loop
  // is not running (it has stopped, or was never started).
  virtual absl::Status RunOnLoop(Task task) = 0;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_TRANSPORT_EVENT_LOOP_H_
