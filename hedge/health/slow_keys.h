// SlowKeys: which keys (read paths, hashed) lately lost a race on which
// replica after running past the read's give-up point, so that a key slow
// on one replica counts against that replica once per window while the
// replica answers other reads, not once per read. One key slow on one
// replica (a large object, a hot row, a cold cache for that key) is the
// key's trait: a client reading it again and again must not make the
// replica look sick to every other read (ejecting it takes it from every
// tenant's hedges). A replica that hangs answers nothing: each of its
// losses counts, however few keys it is asked for.
//
// Holds the kCapacity most recently noted (replica, key) pairs; a pair
// pushed out by newer ones counts again when it loses next.
//
// Thread safety: safe from any thread (a mutex; called only on a loss past
// the give-up point, which is rare).

#ifndef TAILGATE_HEDGE_HEALTH_SLOW_KEYS_H_
#define TAILGATE_HEDGE_HEALTH_SLOW_KEYS_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "hedge/sync/mutex.h"

namespace tailgate::hedge {

class SlowKeys {
 public:
  static constexpr size_t kCapacity = 64;

  explicit SlowKeys(absl::Duration window) : window_(window) {}
  SlowKeys(const SlowKeys&) = delete;
  SlowKeys& operator=(const SlowKeys&) = delete;

  // Notes that `key` lost past the give-up point on `replica` at `now`;
  // `last_answer` is when the replica last answered any read. True when
  // the loss counts: the pair was not noted within the window before `now`
  // (or was pushed out since), or the replica has answered nothing since
  // it was; the pair is then noted at `now`. Key 0 (no key) always counts
  // and is not noted.
  bool NoteLoss(size_t replica, uint64_t key, absl::Time now,
                absl::Time last_answer);

 private:
  struct Entry {
    size_t replica = 0;
    uint64_t key = 0;  // 0: free
    absl::Time at;
  };

  const absl::Duration window_;
  Mutex mu_;
  std::array<Entry, kCapacity> entries_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;  // the slot the next new pair takes
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_HEALTH_SLOW_KEYS_H_
