#include "server/read/stalled_calls.h"

#include "absl/time/clock.h"

namespace tailgate::server {

StalledCalls::StalledCalls(absl::Duration send_timeout, absl::Duration tick)
    : send_timeout_(send_timeout), tick_(tick) {
  if (tick_ > absl::ZeroDuration()) thread_ = std::thread([this] { Run(); });
}

StalledCalls::~StalledCalls() {
  {
    hedge::MutexLock lock(&mu_);
    stopping_ = true;
  }
  changed_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

uint64_t StalledCalls::Watch(StalledCall* call, absl::Time now) {
  hedge::MutexLock lock(&mu_);
  const uint64_t token = next_token_++;
  entries_.emplace(token, Entry{now + send_timeout_, call});
  // Only a reaper asleep for want of entries needs waking (at most once per
  // tick, however many reads); one ticking looks again within a tick.
  if (reaper_idle_) {
    reaper_idle_ = false;
    changed_.SignalAll();  // Unwatch may wait on the same condition
  }
  return token;
}

void StalledCalls::Unwatch(uint64_t token) {
  hedge::MutexLock lock(&mu_);
  for (;;) {
    auto it = entries_.find(token);
    if (it == entries_.end()) return;
    // Inside its own Cancel (OnDone run inline by gRPC) the entry can go
    // at once; elsewhere, wait for the reaper to leave Cancel.
    if (!it->second.cancelling || reaper_ == std::this_thread::get_id()) {
      entries_.erase(it);
      return;
    }
    changed_.Wait(&mu_);
  }
}

int StalledCalls::ReapExpired(absl::Time now) {
  struct Expired {
    uint64_t token;
    StalledCall* call;
    bool first;
  };
  std::vector<Expired> expired;
  {
    hedge::MutexLock lock(&mu_);
    for (auto& [token, entry] : entries_) {
      if (entry.deadline > now) break;
      if (entry.cancelling) continue;
      entry.cancelling = true;
      expired.push_back({token, entry.call, !entry.cancelled});
    }
    reaper_ = std::this_thread::get_id();
  }
  for (const Expired& one : expired) one.call->Cancel(one.first);
  {
    hedge::MutexLock lock(&mu_);
    reaper_ = std::thread::id();
    for (const Expired& one : expired) {
      auto it = entries_.find(one.token);
      if (it != entries_.end()) {
        it->second.cancelling = false;
        it->second.cancelled = true;
      }
      if (one.first) ++cancelled_;
    }
  }
  changed_.SignalAll();
  return static_cast<int>(expired.size());
}

uint64_t StalledCalls::cancelled() const {
  hedge::MutexLock lock(&mu_);
  return cancelled_;
}

int64_t StalledCalls::watched() const {
  hedge::MutexLock lock(&mu_);
  return static_cast<int64_t>(entries_.size());
}

void StalledCalls::Run() {
  for (;;) {
    {
      hedge::MutexLock lock(&mu_);
      while (!stopping_ && entries_.empty()) {
        reaper_idle_ = true;
        changed_.Wait(&mu_);
      }
      reaper_idle_ = false;
      if (stopping_) return;
      // Woken early only by a finished cancel or by stopping.
      const absl::Time wake = absl::Now() + tick_;
      while (!stopping_ && !changed_.WaitWithDeadline(&mu_, wake)) {
      }
      if (stopping_) return;
    }
    ReapExpired(absl::Now());
  }
}

}  // namespace tailgate::server
