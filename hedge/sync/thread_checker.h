// ThreadChecker: a capability for state that only one thread may touch.
//
// Members that only an owning thread (such as an event loop's thread) reads
// or writes are declared ABSL_GUARDED_BY(checker), and every function that
// touches them either starts with checker.AssertOnOwner() or is declared
// ABSL_EXCLUSIVE_LOCKS_REQUIRED(checker). Clang's -Wthread-safety then
// checks at compile time that no path reaches that state without such an
// assertion, and debug builds check at run time that the assertion holds.
//
// Example:
//   class Loop {
//    public:
//     void Run() {
//       loop_thread_.BindToCurrentThread();
//       loop_thread_.AssertOnOwner();
//       ++iterations_;
//       Step();
//     }
//    private:
//     void Step() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
//     hedge::ThreadChecker loop_thread_;
//     int iterations_ ABSL_GUARDED_BY(loop_thread_) = 0;
//   };
//
// Ownership: a checker starts unbound. BindToCurrentThread makes the calling
// thread the owner; otherwise the first thread to call CalledOnOwner or
// AssertOnOwner becomes it. Detach unbinds it, so that state handed from
// one thread to another (built on one, then used only by a loop thread) can
// be re-bound by its next user.
//
// Cost: AssertOnOwner is an assert(): one atomic load and a compare in debug
// builds, nothing under NDEBUG (-c opt). CalledOnOwner always checks.
//
// Thread safety: every method is safe from any thread. Ownership is a
// debugging aid, not synchronisation: handing state to another thread still
// needs a happens-before edge (a thread start, a mutex, a join).

#ifndef TAILGATE_HEDGE_SYNC_THREAD_CHECKER_H_
#define TAILGATE_HEDGE_SYNC_THREAD_CHECKER_H_

#include <atomic>
#include <cassert>
#include <thread>

#include "absl/base/thread_annotations.h"

namespace tailgate::hedge {

class ABSL_LOCKABLE ThreadChecker {
 public:
  ThreadChecker() = default;  // unbound
  ThreadChecker(const ThreadChecker&) = delete;
  ThreadChecker& operator=(const ThreadChecker&) = delete;

  // Makes the calling thread the owner, replacing any earlier one.
  void BindToCurrentThread() {
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }

  // Unbinds: the next thread to check becomes the owner.
  void Detach() { owner_.store(std::thread::id(), std::memory_order_relaxed); }

  // True if the calling thread is the owner; if there is none, binds the
  // calling thread and returns true.
  bool CalledOnOwner() const {
    const std::thread::id self = std::this_thread::get_id();
    std::thread::id owner = owner_.load(std::memory_order_relaxed);
    if (owner == std::thread::id() &&
        owner_.compare_exchange_strong(owner, self,
                                       std::memory_order_relaxed)) {
      return true;
    }
    return owner == self;
  }

  // Tells the analysis that the calling thread owns this capability from
  // here to the end of the scope. Debug builds abort unless CalledOnOwner();
  // under NDEBUG it compiles to nothing.
  void AssertOnOwner() const ABSL_ASSERT_EXCLUSIVE_LOCK() {
    assert(CalledOnOwner());
  }

 private:
  // Default-constructed (no thread) when unbound.
  mutable std::atomic<std::thread::id> owner_{std::thread::id()};
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_SYNC_THREAD_CHECKER_H_
