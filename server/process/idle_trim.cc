#include "server/process/idle_trim.h"

#include <malloc.h>
#include <pthread.h>

#include <utility>

namespace tailgate::server {

IdleTrim::IdleTrim(absl::AnyInvocable<uint64_t()> reads,
                   absl::Duration period, absl::AnyInvocable<void()> trim)
    : reads_(std::move(reads)),
      trim_(trim != nullptr ? std::move(trim)
                            : absl::AnyInvocable<void()>([] { malloc_trim(0); })),
      period_(period) {
  if (period_ > absl::ZeroDuration()) thread_ = std::thread([this] { Run(); });
}

IdleTrim::~IdleTrim() {
  {
    hedge::MutexLock lock(&stop_mu_);
    stopping_ = true;
  }
  stop_cv_.Signal();
  if (thread_.joinable()) thread_.join();
}

bool IdleTrim::Tick() {
  hedge::MutexLock lock(&tick_mu_);
  const uint64_t reads = reads_();
  const bool quiet = reads == last_seen_;
  last_seen_ = reads;
  if (!quiet || reads == trimmed_at_) return false;
  trimmed_at_ = reads;
  trim_();
  trims_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void IdleTrim::Run() {
  // Shown by top -H and in /proc/PID/task/*/comm.
  pthread_setname_np(pthread_self(), "idle_trim");
  while (true) {
    {
      hedge::MutexLock lock(&stop_mu_);
      const absl::Time next = absl::Now() + period_;
      while (!stopping_ && !stop_cv_.WaitWithDeadline(&stop_mu_, next)) {
      }
      if (stopping_) return;
    }
    Tick();
  }
}

}  // namespace tailgate::server
