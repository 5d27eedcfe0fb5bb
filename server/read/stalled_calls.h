// StalledCalls: cancels calls whose finished response the client has not
// taken within a time limit, so that a client that never reads cannot keep
// memory and a read slot (ResponseMemory) for ever.
//
// A reactor calls Watch just before Finish and Unwatch from OnDone. A call
// still watched `send_timeout` after Watch is cancelled (RST_STREAM): gRPC
// drops its response and runs OnDone. A call still watched at a later tick
// (gRPC has not finished the cancel, e.g. while its connection's output is
// stuck) is cancelled again, with `first` false, until Unwatch. The
// reaper thread looks once per
// `tick` while calls are watched and sleeps while none is, so a call is
// cancelled between send_timeout and send_timeout + tick after Watch.
//
// Thread safety: Watch and Unwatch from any thread. Cancel runs on the
// reaper thread (or the caller of ReapExpired), never under the lock; a
// call's OnDone may run inside its Cancel (gRPC runs inlineable reactions
// on the thread that triggers them), and Unwatch is safe there too.
#ifndef TAILGATE_SERVER_READ_STALLED_CALLS_H_
#define TAILGATE_SERVER_READ_STALLED_CALLS_H_

#include <cstdint>
#include <map>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "hedge/sync/mutex.h"

namespace tailgate::server {

// What StalledCalls cancels. Cancel must not block. `first`: this call's
// first cancel (count a dropped answer then, not on the repeats).
class StalledCall {
 public:
  virtual ~StalledCall() = default;
  virtual void Cancel(bool first) = 0;
};

class StalledCalls {
 public:
  // Starts the reaper thread unless `tick` is zero (tests then call
  // ReapExpired themselves).
  StalledCalls(absl::Duration send_timeout, absl::Duration tick);
  ~StalledCalls();  // stops the reaper thread
  StalledCalls(const StalledCalls&) = delete;
  StalledCalls& operator=(const StalledCalls&) = delete;

  // REQUIRES: `call` stays valid until Unwatch(token) returns.
  uint64_t Watch(StalledCall* call, absl::Time now);
  // Once Unwatch returns, `call` is not used again: if the reaper is
  // cancelling it on another thread, Unwatch waits for that to finish.
  void Unwatch(uint64_t token);

  // Cancels every call watched since `now - send_timeout` or earlier;
  // returns how many.
  int ReapExpired(absl::Time now);

  // Calls cancelled at least once (each counted once).
  uint64_t cancelled() const;
  int64_t watched() const;

 private:
  struct Entry {
    absl::Time deadline;
    StalledCall* call;
    bool cancelling = false;
    bool cancelled = false;  // Cancel has been called at least once
  };

  void Run();

  const absl::Duration send_timeout_;
  const absl::Duration tick_;
  mutable hedge::Mutex mu_;
  hedge::CondVar changed_;  // an entry was added, or a cancel finished
  // By token: tokens grow with time, so the first entry expires first.
  std::map<uint64_t, Entry> entries_ ABSL_GUARDED_BY(mu_);
  uint64_t next_token_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t cancelled_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The reaper waits for a first entry; Watch signals only then, so reads
  // do not wake it one by one.
  bool reaper_idle_ ABSL_GUARDED_BY(mu_) = false;
  std::thread::id reaper_ ABSL_GUARDED_BY(mu_);  // thread inside Cancel
  std::thread thread_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_READ_STALLED_CALLS_H_
