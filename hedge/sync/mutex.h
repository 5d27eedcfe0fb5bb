// Mutex, MutexLock, CondVar: a std::mutex that clang's thread-safety
// analysis understands.
//
// Why not absl::Mutex: the system abseil is not built with ThreadSanitizer,
// so TSan cannot see an absl::Mutex synchronize and reports races on the
// state it protects. std::mutex goes through pthread, which TSan intercepts;
// but std::mutex carries no capability attributes, so ABSL_GUARDED_BY on a
// std::mutex is not checked. This wrapper is both.
//
// Example:
//   class Counter {
//    public:
//     void Add(int n) {
//       hedge::MutexLock lock(&mu_);
//       total_ += n;
//     }
//    private:
//     hedge::Mutex mu_;
//     int total_ ABSL_GUARDED_BY(mu_) = 0;
//   };
//
// Thread safety: Mutex and CondVar are safe from any thread. A MutexLock
// belongs to the thread that made it. Not recursive: locking a Mutex the
// calling thread already holds is undefined behaviour (as for std::mutex).

#ifndef TAILGATE_HEDGE_SYNC_MUTEX_H_
#define TAILGATE_HEDGE_SYNC_MUTEX_H_

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tailgate::hedge {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // Blocks until the calling thread holds the mutex.
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  // REQUIRES: the calling thread holds the mutex.
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` from construction to destruction.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable for Mutex. As with any condition variable, a wait may
// return without a Signal (a spurious wakeup): callers re-check their
// condition in a loop.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases `mu`, waits for a signal, and holds `mu` again on return.
  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's MutexLock unlocks it
  }

  // As Wait, but returns by `deadline` at the latest. Returns true if the
  // deadline has passed (so the caller checks its condition one last time).
  bool WaitWithDeadline(Mutex* mu, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return true;
    // Capped so that steady_clock::now() plus the wait cannot overflow (an
    // InfiniteFuture deadline); the caller's loop waits again.
    constexpr absl::Duration kLongestWait = absl::Hours(24 * 365);
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait_for(lock, absl::ToChronoNanoseconds(std::min(left, kLongestWait)));
    lock.release();
    return absl::Now() >= deadline;
  }

  // Wakes one waiter / every waiter. The caller need not hold the mutex.
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_SYNC_MUTEX_H_
