// The loop's own timers (hedge and deadline timers): the heap, the
// timerfd that wakes the loop for the next one, the spin that covers the
// timerfd's last microseconds, and firing the due ones. Loop thread only,
// like the rest of CurlLoop (curl_loop.h).

#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "hedge/transport/curl/curl_loop.h"

namespace tailgate::hedge::transport {

void CurlLoop::ArmTimer(absl::Time at, uint64_t key) {
  loop_thread_.AssertOnOwner();
  timers_.Arm(at, key);
  pending_timers_.store(timers_.size(), std::memory_order_relaxed);
}

void CurlLoop::CancelTimer(uint64_t key) {
  loop_thread_.AssertOnOwner();
  timers_.Cancel(key);
  pending_timers_.store(timers_.size(), std::memory_order_relaxed);
}

void CurlLoop::OnTimerFd(int, short, void* loop) noexcept {
  auto* self = static_cast<CurlLoop*>(loop);
  self->loop_thread_.AssertOnOwner();
  self->ReadTimerFd();  // the timers fire in the next RunDueWork
}

void CurlLoop::ReadTimerFd() {
  uint64_t expirations;
  while (read(timer_fd_, &expirations, sizeof(expirations)) > 0) {
  }
  timer_fd_armed_for_ = absl::InfiniteFuture();
  SpinUntilNextTimer();
}

void CurlLoop::SpinUntilNextTimer() {
  if (timer_spin_ <= absl::ZeroDuration()) return;
  const absl::Time due = timers_.next();
  // Once per due time: if the spin ran out first (an injected clock that
  // does not move), SetTimerFd then waits for the due time itself.
  if (due == spun_for_ || due - clock_.Now() > timer_spin_) return;
  spun_for_ = due;
  const auto start = std::chrono::steady_clock::now();
  const auto limit = start + absl::ToChronoNanoseconds(timer_spin_);
  auto now = start;
  while (clock_.Now() < due && now < limit) {
    now = std::chrono::steady_clock::now();
  }
  spin_nanos_.fetch_add(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count(),
      std::memory_order_relaxed);
}

void CurlLoop::FireDueTimers() {
  if (timers_.empty()) return;
  const absl::Time now = clock_.Now();
  while (true) {
    const absl::Time at = timers_.next();
    const std::optional<uint64_t> key = timers_.PopDue(now);
    if (!key.has_value()) break;
    pending_timers_.store(timers_.size(), std::memory_order_relaxed);
    timers_fired_.fetch_add(1, std::memory_order_relaxed);
    lateness_nanos_.fetch_add(absl::ToInt64Nanoseconds(now - at),
                              std::memory_order_relaxed);
    // Every timer is the attached engine's (Detach drops them all).
    if (callbacks_ != nullptr) callbacks_->OnTimer(*key);
  }
}

bool CurlLoop::SetTimerFd() {
  const absl::Time next = timers_.next();
  if (next == timer_fd_armed_for_) return true;
  // No timer left (the last read finished and cancelled its own): leave
  // the timerfd armed rather than disarm it. The next read re-arms it for
  // its own timer anyway, usually before it fires; if none comes, it wakes
  // the loop once for nothing. This spares the disarming system call of
  // every read that finds no other read in flight. A timer that is still
  // wanted is armed for exactly: an early wake for a cancelled one would
  // cost a context switch, dearer than the call.
  if (next == absl::InfiniteFuture() &&
      timer_fd_armed_for_ != absl::InfinitePast()) {
    return true;
  }
  itimerspec spec{};
  if (next != absl::InfiniteFuture()) {
    // Relative, so an injected clock with its own epoch works too.
    // Early by timer_spin_: SpinUntilNextTimer covers the rest.
    const absl::Duration early =
        next == spun_for_ ? absl::ZeroDuration() : timer_spin_;
    absl::Duration wait = next - early - clock_.Now();
    if (wait < absl::Nanoseconds(1)) wait = absl::Nanoseconds(1);
    spec.it_value = absl::ToTimespec(wait);
  }
  // Fails only for an invalid descriptor or spec, neither of which the loop
  // makes; if it does, the armed time stays unknown so the next call tries
  // again.
  if (timerfd_settime(timer_fd_, 0, &spec, nullptr) != 0) {
    LogOnce(timer_error_logged_,
            absl::StrCat("timerfd_settime: ", std::strerror(errno)));
    timer_fd_armed_for_ = absl::InfinitePast();
    return false;
  }
  timer_fd_armed_for_ = next;
  return true;
}

}  // namespace tailgate::hedge::transport
