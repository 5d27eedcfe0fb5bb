#include "hedge/health/slow_keys.h"

namespace tailgate::hedge {

bool SlowKeys::NoteLoss(size_t replica, uint64_t key, absl::Time now,
                        absl::Time last_answer) {
  if (key == 0) return true;
  MutexLock lock(&mu_);
  for (Entry& entry : entries_) {
    if (entry.key != key || entry.replica != replica) continue;
    const bool counts = now - entry.at >= window_ || last_answer <= entry.at;
    if (counts) entry.at = now;  // a new window starts with this loss
    return counts;
  }
  entries_[next_] = Entry{replica, key, now};
  next_ = (next_ + 1) % kCapacity;
  return true;
}

}  // namespace tailgate::hedge
