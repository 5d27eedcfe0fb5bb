// CurlLoop: the engine's event-loop thread around one libcurl multi handle.
//
// The loop waits in curl_multi_poll on curl's sockets plus a timerfd that
// carries the loop's own timers (hedge and deadline timers), so a timer
// fires within microseconds of its time rather than at curl's whole
// milliseconds. Other threads wake it through an eventfd that it polls with
// curl's sockets (one write to wake it, one read when it wakes: libcurl's
// own curl_multi_wakeup costs a socket send and two receives). It never
// spins while idle: with no transfer and no timer it sleeps until woken.
//
// Each iteration: Callbacks::OnWakeup (drain the owner's inbox), due timers
// (Callbacks::OnTimer), curl_multi_perform, finished transfers
// (Callbacks::OnTransferDone), then Callbacks::BeforeWait just before the
// loop sleeps (work that must not delay this iteration's sends; it names
// when it wants to run again, to the millisecond, for work it put off). On
// Stop, Callbacks::OnStop runs on the loop thread as its last act.
//
// The thread is named "engine_loop" (top -H, /proc/PID/task/*/comm; the
// sidecar's --sched_policy and its tests find it by that name). Start
// creates it, so it inherits the scheduling policy and CPU affinity the
// caller has then.
//
// Failures: an error from curl_multi_perform or curl_multi_poll (out of
// memory, poll() itself failing) or from timerfd_settime is written to
// stderr the first time it happens, once per kind.
// After a failing perform or poll the loop backs off: it waits on its
// timerfd alone (so timers still fire on time) for 1 ms, doubling per
// consecutive failing iteration up to 100 ms (and never past the time the
// loop must run again; a Wakeup meanwhile is seen when the wait ends), then
// tries curl again: it never spins. The loop fails no transfer itself:
// they move on whenever curl does, and each read's deadline timer (still
// fired from the timerfd) ends it otherwise. If the timerfd cannot be
// armed, curl_multi_poll's millisecond timeout covers the next timer
// instead.
//
// Thread safety: Start, Stop and Wakeup are safe from any thread (Stop not
// from the loop thread itself), and so are the figures' accessors.
// Everything else is loop thread only: the loop-only members are guarded by
// the loop_thread_ capability, which clang's -Wthread-safety checks at
// compile time and debug builds check at run time. Callbacks run on the
// loop thread.

#ifndef TAILGATE_HEDGE_TRANSPORT_CURL_LOOP_H_
#define TAILGATE_HEDGE_TRANSPORT_CURL_LOOP_H_

#include <curl/curl.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hedge/clock.h"
#include "hedge/sync/thread_checker.h"
#include "hedge/transport/timer_heap.h"

namespace tailgate::hedge::transport {

class CurlLoop {
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

  // `clock` and `callbacks` must outlive the loop.
  CurlLoop(Clock& clock, Callbacks& callbacks, const Options& options);
  ~CurlLoop();  // REQUIRES: stopped or never started
  CurlLoop(const CurlLoop&) = delete;
  CurlLoop& operator=(const CurlLoop&) = delete;

  absl::Status Start();
  void Stop();    // runs OnStop on the loop thread, then joins it
  void Wakeup();  // makes the loop run OnWakeup soon

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
  void Run() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void FireDueTimers() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void DrainFinishedTransfers() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Runs curl_multi_perform; false (counted, the first one logged) if it
  // failed.
  bool Perform() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Sleeps until a socket, a wakeup, the timerfd or `wake_by`; false if
  // curl_multi_poll failed (and then it has not slept).
  bool Poll(absl::Time wake_by) ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Sleeps on the timerfd alone for at most `backoff` or until `wake_by`.
  void BackOff(absl::Time wake_by, absl::Duration backoff)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void ReadTimerFd() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void ReadWakeFd() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  int PollTimeoutMillis(absl::Time wake_by)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // Arms the timerfd for the next timer; false (counted, the first one
  // logged) if timerfd_settime failed, and then it tries again next time.
  bool SetTimerFd() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void SpinUntilNextTimer() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);

  Clock& clock_;
  Callbacks& callbacks_;
  // Loop thread only.
  CURLM* const multi_;
  const int timer_fd_;
  // Written by Wakeup from any thread, read by the loop.
  const int wake_fd_;
  const absl::Duration timer_spin_;
  std::thread thread_;  // Start and Stop only
  std::atomic<bool> stopping_{false};

  // The loop thread, bound by it as its first act.
  ThreadChecker loop_thread_;
  TimerHeap timers_ ABSL_GUARDED_BY(loop_thread_);
  absl::Time timer_fd_armed_for_ ABSL_GUARDED_BY(loop_thread_) =
      absl::InfiniteFuture();
  // Due time of the last spin.
  absl::Time spun_for_ ABSL_GUARDED_BY(loop_thread_) = absl::InfinitePast();
  // The last back-off; zero unless the last iteration's curl call failed.
  absl::Duration backoff_ ABSL_GUARDED_BY(loop_thread_);
  // Whether a failure of each kind has been written to stderr yet.
  bool perform_error_logged_ ABSL_GUARDED_BY(loop_thread_) = false;
  bool poll_error_logged_ ABSL_GUARDED_BY(loop_thread_) = false;
  bool timer_error_logged_ ABSL_GUARDED_BY(loop_thread_) = false;

  std::atomic<uint64_t> iterations_{0};
  std::atomic<uint64_t> timers_fired_{0};
  std::atomic<size_t> pending_timers_{0};
  std::atomic<int64_t> lateness_nanos_{0};
  std::atomic<int64_t> spin_nanos_{0};
};

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_CURL_LOOP_H_
