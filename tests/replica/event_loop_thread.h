// EventLoopThread: one libevent event_base, run on a thread of its own. The
// loopback test servers in this package (Replica, SilentListener) each own
// one, and so does the server's FakeLoopEngine (server/testing), whose loop
// the front doors are served on in their tests.
//
// Thread safety: Start and Stop may be called from any thread except the
// loop thread. base() is constant after Create. Every callback registered on
// the base runs on the loop thread; after Stop returns none runs any more,
// so the owner may then tear down what it registered from its own thread,
// before the EventLoopThread (and with it the base) is destroyed.
//
// Timers use the precise monotonic clock (EVENT_BASE_FLAG_PRECISE_TIMER), so
// they never fire early. The loop thread blocks SIGPIPE, so writing to a
// socket whose peer has gone fails with EPIPE instead of killing the test
// process.

#ifndef TAILGATE_TESTS_REPLICA_EVENT_LOOP_THREAD_H_
#define TAILGATE_TESTS_REPLICA_EVENT_LOOP_THREAD_H_

#include <event2/event.h>

#include <atomic>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"

namespace tailgate::testing {

class EventLoopThread {
 public:
  // Creates the base (after evthread_use_pthreads, so that other threads may
  // wake it). The loop does not run until Start.
  static absl::StatusOr<std::unique_ptr<EventLoopThread>> Create();

  ~EventLoopThread();  // Stop(), then frees the base
  EventLoopThread(const EventLoopThread&) = delete;
  EventLoopThread& operator=(const EventLoopThread&) = delete;

  event_base* base() const { return base_; }

  // REQUIRES: called at most once.
  void Start();
  // Breaks the loop and joins the thread. Idempotent; safe before Start.
  void Stop();
  bool InLoopThread() const;

 private:
  EventLoopThread(event_base* base, event* stop_event);
  void Run();
  static void OnStop(evutil_socket_t fd, short what, void* arg) noexcept;

  event_base* const base_;
  event* const stop_event_;  // activated by Stop; breaks the loop
  std::thread thread_;
  std::atomic<std::thread::id> loop_thread_id_{};  // set by the loop thread
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_REPLICA_EVENT_LOOP_THREAD_H_
