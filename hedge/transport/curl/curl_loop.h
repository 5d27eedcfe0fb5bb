// CurlLoop: the process's event-loop thread around one libcurl multi
// handle. The process owns it and lends it: to the engine, which Attaches
// as the loop's Callbacks and drives its transfers and timers there
// (Engine::Create), and to guests (EventLoop::RunOnLoop).
//
// The loop is a libevent event_base (epoll) that drives libcurl through
// its multi_socket API: curl names the sockets it wants watched
// (CURLMOPT_SOCKETFUNCTION) and when it wants to be called again
// (CURLMOPT_TIMERFUNCTION), and the loop calls curl_multi_socket_action
// for exactly the socket that is ready, or for curl's timeout. Nothing is
// re-registered per iteration and no zero-timeout poll() is made on curl's
// behalf. The loop's own timers (hedge and deadline timers) sit behind a
// timerfd watched by the base, so a timer fires within microseconds of
// its time rather than at epoll's whole milliseconds. Other threads wake
// the loop through an eventfd the base watches (one write to wake it, one
// read when it wakes); a Wakeup from the loop thread itself costs nothing:
// the loop looks at its owner's inbox again before it sleeps. It never
// spins while idle: with no transfer and no timer it sleeps until woken.
//
// Each iteration: Callbacks::OnWakeup (drain the engine's inbox), guests'
// tasks (Post); if a timer is due, the events ready at that moment (a pass
// of the base that does not sleep) and the transfers they finished, so an
// answer that arrived while the thread was held up (descheduled on a busy
// host, or in a long callback) is taken before the hedge or deadline timer
// that came due meanwhile; then due timers (Callbacks::OnTimer), finished
// transfers
// (Callbacks::OnTransferDone), curl's timeout if due (a transfer added
// above starts here) and the transfers that finished in it, then
// Callbacks::BeforeWait just before the loop sleeps (work that must not
// delay this iteration's sends; it names when it wants to run again, to the
// millisecond, for work it put off); then one pass of the event_base
// (EVLOOP_ONCE): it sleeps until something is ready and runs the ready
// events' callbacks: curl's sockets, the timerfd, the wake-up, and the
// events of guests (below). On Detach, Callbacks::OnStop runs on the loop
// thread and the callbacks are called no more; on Stop, guests' tasks still
// queued run, then OnStop if the callbacks are still attached, as the
// loop thread's last act. Without callbacks attached, the loop runs
// guests' tasks and events only.
//
// Guests: code that wants to live on the loop thread (the front doors
// serve their connections here, so that a read never changes thread) Posts
// a task (RunOnLoop); it runs on the loop thread with the loop's event_base, on
// which it may create events (evhttp, bufferevents, timers) whose callbacks
// then run on the loop thread too. A guest must remove all of them, from the
// loop thread, before the loop stops, and its callbacks must not block.
// The base has no lock (EVENT_BASE_FLAG_NOLOCK): it must never be touched
// from another thread.
//
// The thread is named "engine_loop" (top -H, /proc/PID/task/*/comm; the
// sidecar's --sched_policy and its tests find it by that name). Start
// creates it, so it inherits the scheduling policy and CPU affinity the
// caller has then. It blocks SIGPIPE: a write to a socket whose peer has
// gone fails with EPIPE instead of killing the process.
//
// Failures: an error from curl_multi_socket_action or from the event_base's
// wait (out of memory, epoll_wait itself failing) or from timerfd_settime
// is written to stderr the first time it happens, once per kind.
// After an iteration with such a failing curl call or wait the loop backs
// off: it waits on its timerfd alone (so timers still fire on time) for
// 1 ms, doubling per consecutive failing iteration up to 100 ms (and never
// past the time the loop must run again; a Wakeup meanwhile is seen when
// the wait ends), then tries again: it never spins. The loop fails no
// transfer itself: they move on whenever curl does, and each read's
// deadline timer (still fired from the timerfd) ends it otherwise. If the
// timerfd cannot be armed, the base's own millisecond timeout covers the
// next timer instead.
//
// The base batches its epoll changes (libevent's change list) and applies
// them in its next epoll_wait; a socket curl closes is therefore closed by
// the loop after that wait (CURLOPT_CLOSESOCKETFUNCTION, set by
// AddTransfer), so that its number is never reused by another thread
// before its removal from epoll is applied.
//
// Thread safety: Start, Stop, Wakeup, Post and RunOnLoop are safe from any
// thread (Stop not from the loop thread itself), and so are the figures'
// accessors; Attach and Detach from any thread but the loop's (each waits
// for a step run there). Everything else is loop thread only: the loop-only
// members are guarded by the loop_thread_ capability, which clang's
// -Wthread-safety checks at compile time and debug builds check at run
// time. Callbacks and tasks run on the loop thread.

#ifndef TAILGATE_HEDGE_TRANSPORT_CURL_CURL_LOOP_H_
#define TAILGATE_HEDGE_TRANSPORT_CURL_CURL_LOOP_H_

#include <curl/curl.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hedge/clock.h"
#include "hedge/sync/mutex.h"
#include "hedge/sync/thread_checker.h"
#include "hedge/transport/curl/timer_heap.h"
#include "hedge/transport/event_loop.h"

struct event;
struct event_base;

namespace tailgate::hedge::transport {

class CurlLoop final : public EventLoop {
 public:
  // Invoked on the loop thread. Implementations must not block.
  class Callbacks {
   public:
    virtual ~Callbacks() = default;
    virtual void OnWakeup() = 0;
    virtual void OnTimer(uint64_t key) = 0;
    virtual void OnTransferDone(CURL* easy, CURLcode result) = 0;
    // Returns when the loop must run again at the latest (InfiniteFuture:
    // no need); the loop wakes then, up to a millisecond late.
    virtual absl::Time BeforeWait() = 0;
    virtual void OnStop() = 0;
  };

  // What the attached engine asks of the loop.
  struct Options {
    long max_connections = 160;  // the multi handle's connection cache
    // Wake this long before a timer is due and spin until it is. An idle
    // vCPU takes about 0.1 ms to wake up on a timer here, and that delay
    // would land on every hedge. Costs at most this much CPU per timer that
    // fires (a finished read's timers are cancelled, not fired); the spin
    // also ends after this much real time whatever the injected clock
    // says, so a fake clock cannot trap the loop. 0 disables.
    absl::Duration timer_spin = absl::ZeroDuration();
  };

  // `clock` must outlive the loop.
  explicit CurlLoop(Clock& clock);
  ~CurlLoop() override;  // Stops the loop if it runs.
  CurlLoop(const CurlLoop&) = delete;
  CurlLoop& operator=(const CurlLoop&) = delete;

  absl::Status Start();
  // Runs queued tasks, then OnStop if callbacks are attached, on the loop
  // thread; joins. REQUIRES: not on the loop thread.
  void Stop();
  void Wakeup();  // makes the loop run OnWakeup soon

  // Makes `callbacks` the loop's, with `options`, from the loop's next
  // iteration on; returns once they are. FAILED_PRECONDITION if the loop
  // is not running or has callbacks already. `callbacks` must stay valid
  // until Detach, or until Stop returns.
  absl::Status Attach(Callbacks& callbacks, const Options& options);
  // Runs `callbacks`' OnStop on the loop thread, drops their pending
  // timers and calls them no more; returns once done. Nothing if they are
  // not the attached ones (an engine whose Attach failed) or the loop has
  // stopped (Stop ran OnStop then).
  void Detach(Callbacks& callbacks);

  Clock& clock() const { return clock_; }

  // EventLoop: Post, with a status.
  absl::Status RunOnLoop(Task task) override;

  // Queues `task` for the loop thread, where it runs in the next iteration
  // (or, once Stop is called, before OnStop). False, and `task` is dropped
  // unrun, if the loop has stopped or was never started.
  bool Post(Task task);

  // Loop thread only (from the callbacks).
  absl::Status AddTransfer(CURL* easy);
  void RemoveTransfer(CURL* easy);             // aborts it if unfinished
  void ArmTimer(absl::Time at, uint64_t key);  // OnTimer(key) at `at`
  void CancelTimer(uint64_t key);              // no-op unless `key` is pending

  // Figures for benchmarks: loop iterations and how late timers fired.
  uint64_t iterations() const {
    return iterations_.load(std::memory_order_relaxed);
  }
  uint64_t timers_fired() const {
    return timers_fired_.load(std::memory_order_relaxed);
  }
  size_t pending_timers() const {
    return pending_timers_.load(std::memory_order_relaxed);
  }
  absl::Duration total_timer_spin() const {
    return absl::Nanoseconds(spin_nanos_.load(std::memory_order_relaxed));
  }
  absl::Duration total_timer_lateness() const {
    return absl::Nanoseconds(lateness_nanos_.load(std::memory_order_relaxed));
  }

 private:
  // libcurl's and libevent's callbacks (loop thread).
  static int OnCurlSocket(CURL* easy, curl_socket_t fd, int what, void* loop,
                          void* watch) noexcept;
  static int OnCurlTimer(CURLM* multi, long timeout_ms, void* loop) noexcept;
  static int OnCurlClose(void* loop, curl_socket_t fd) noexcept;
  static void OnSocketReady(int fd, short what, void* loop) noexcept;
  static void OnTimerFd(int fd, short what, void* loop) noexcept;
  static void OnWakeFd(int fd, short what, void* loop) noexcept;
  static void OnWaitOver(int fd, short what, void* loop) noexcept;

  void Run() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Everything an iteration does before it sleeps but BeforeWait.
  void RunDueWork() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Runs the tasks Posted so far; false if there were none.
  bool RunTasks() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void FireDueTimers() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void DrainFinishedTransfers() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Runs curl_multi_socket_action; an error is counted (the first one
  // logged) and makes the iteration back off.
  void SocketAction(curl_socket_t fd, int mask)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Watches `fd` for `what` (CURL_POLL_*) on behalf of curl.
  void Watch(curl_socket_t fd, int what, event* watch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Sleeps until an event is ready or `wake_by`, and runs the ready events'
  // callbacks; false if the base's wait failed (and then it has not slept).
  bool Wait(absl::Time wake_by) ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Sleeps on the timerfd alone for at most `backoff` or until `wake_by`.
  void BackOff(absl::Time wake_by, absl::Duration backoff)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void ReadTimerFd() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void ReadWakeFd() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // How long the loop may sleep, up to `wake_by` and curl's timeout.
  absl::Duration WaitFor(absl::Time wake_by)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Arms the timerfd for the next timer; false (counted, the first one
  // logged) if timerfd_settime failed, and then it tries again next time.
  // One pass of the base that does not sleep, then the transfers it
  // finished: before due timers fire, so that an answer that arrived while
  // the loop thread was held up beats the timer that came due meanwhile.
  void TakeInReadyEvents() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Timers (curl_loop_timers.cc). Arms the timerfd for the next timer;
  // false if it could not.
  bool SetTimerFd() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void SpinUntilNextTimer() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Writes `message` to stderr unless `logged`; sets `logged`.
  static void LogOnce(bool& logged, const std::string& message);
  bool OnLoopThread() const {
    return loop_thread_id_.load(std::memory_order_relaxed) ==
           std::this_thread::get_id();
  }

  // Runs `step` on the loop thread and waits for it; false (and `step`
  // never runs) if the loop is not running.
  bool RunAndWait(absl::AnyInvocable<void()> step);

  Clock& clock_;
  // Loop thread only.
  CURLM* const multi_;
  event_base* const base_;
  const int timer_fd_;
  // Written by Wakeup from any thread, read by the loop.
  const int wake_fd_;
  // The base's events of the loop's own: the timerfd, the eventfd and the
  // end of a wait. Made by the constructor, then loop thread only.
  event* timer_event_ = nullptr;
  event* wake_event_ = nullptr;
  event* wait_event_ = nullptr;
  std::thread thread_;  // Start and Stop only
  std::atomic<bool> stopping_{false};
  std::atomic<std::thread::id> loop_thread_id_{std::thread::id()};

  // Posted tasks, and whether the loop takes more.
  Mutex tasks_mu_;
  std::vector<Task> tasks_ ABSL_GUARDED_BY(tasks_mu_);
  bool tasks_closed_ ABSL_GUARDED_BY(tasks_mu_) = true;  // until Start

  // The loop thread, bound by it as its first act.
  ThreadChecker loop_thread_;
  // The attached engine's, or null, and what it asked for.
  Callbacks* callbacks_ ABSL_GUARDED_BY(loop_thread_) = nullptr;
  absl::Duration timer_spin_ ABSL_GUARDED_BY(loop_thread_);
  // The watches of the sockets curl has asked the loop to watch.
  absl::flat_hash_set<event*> watches_ ABSL_GUARDED_BY(loop_thread_);
  // Watches of sockets curl has let go of; freed outside the base's
  // callbacks (one may be the watch whose callback is running).
  std::vector<event*> retired_watches_ ABSL_GUARDED_BY(loop_thread_);
  // Sockets curl has closed, to be closed once the base has applied their
  // removal from epoll (Wait).
  std::vector<curl_socket_t> closing_ ABSL_GUARDED_BY(loop_thread_);
  // When curl wants curl_multi_socket_action(CURL_SOCKET_TIMEOUT), on the
  // real monotonic clock (curl's timeouts are real time whatever clock_ is).
  absl::Time curl_due_ ABSL_GUARDED_BY(loop_thread_) = absl::InfiniteFuture();
  // A Wakeup came from the loop thread itself: look again before sleeping.
  bool woken_ ABSL_GUARDED_BY(loop_thread_) = false;
  TimerHeap timers_ ABSL_GUARDED_BY(loop_thread_);
  absl::Time timer_fd_armed_for_ ABSL_GUARDED_BY(loop_thread_) =
      absl::InfiniteFuture();
  // Due time of the last spin.
  absl::Time spun_for_ ABSL_GUARDED_BY(loop_thread_) = absl::InfinitePast();
  // Whether this iteration's curl call or wait failed.
  bool failed_ ABSL_GUARDED_BY(loop_thread_) = false;
  // The last back-off; zero unless the last iteration failed.
  absl::Duration backoff_ ABSL_GUARDED_BY(loop_thread_);
  // Whether a failure of each kind has been written to stderr yet.
  bool action_error_logged_ ABSL_GUARDED_BY(loop_thread_) = false;
  bool wait_error_logged_ ABSL_GUARDED_BY(loop_thread_) = false;
  bool timer_error_logged_ ABSL_GUARDED_BY(loop_thread_) = false;

  std::atomic<uint64_t> iterations_{0};
  std::atomic<uint64_t> timers_fired_{0};
  std::atomic<size_t> pending_timers_{0};
  std::atomic<int64_t> lateness_nanos_{0};
  std::atomic<int64_t> spin_nanos_{0};
};

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_CURL_CURL_LOOP_H_
