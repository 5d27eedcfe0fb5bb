#include "hedge/health/slow_keys.h"

namespace tailgate::hedge {

bool SlowKeys::NoteLoss(size_t replica, uint64_t key, absl::Time now) {
  if (key == 0) return true;
  MutexLock lock(&mu_);
  for (Entry& entry : entries_) {
    if (entry.key != key || entry.replica != replica) continue;
    const bool news = now - entry.at >= window_;
    if (news) entry.at = now;  // a new window starts with this loss
    return news;
  }
  entries_[next_] = Entry{replica, key, now};
  next_ = (next_ + 1) % kCapacity;
  return true;
}

}  // namespace tailgate::hedge
