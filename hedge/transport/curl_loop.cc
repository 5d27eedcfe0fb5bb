#include "hedge/transport/curl_loop.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <pthread.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"

namespace tailgate::hedge::transport {
namespace {

// With no transfer and no timer the loop sleeps until woken; curl_multi_poll
// still needs a finite timeout.
constexpr int kIdlePollMillis = 60'000;

// Back-off after a failing curl_multi_perform or curl_multi_poll: doubles
// per consecutive failing iteration, from the first to the last.
constexpr absl::Duration kFirstBackoff = absl::Milliseconds(1);
constexpr absl::Duration kMaxBackoff = absl::Milliseconds(100);

// Writes `message` to stderr unless `logged`; sets `logged`.
void LogOnce(bool& logged, const std::string& message) {
  if (logged) return;
  logged = true;
  std::fprintf(stderr, "curl_loop: %s (further ones are not logged)\n",
               message.c_str());
}

}  // namespace

CurlLoop::CurlLoop(Clock& clock, Callbacks& callbacks, const Options& options)
    : clock_(clock),
      callbacks_(callbacks),
      multi_(curl_multi_init()),
      timer_fd_(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)),
      wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      timer_spin_(options.timer_spin) {
  if (multi_ != nullptr) {
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, options.max_connections);
    curl_multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
  }
}

CurlLoop::~CurlLoop() {
  assert(!thread_.joinable());
  if (multi_ != nullptr) curl_multi_cleanup(multi_);
  if (timer_fd_ >= 0) close(timer_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

absl::Status CurlLoop::Start() {
  if (multi_ == nullptr) return absl::InternalError("curl_multi_init failed");
  if (timer_fd_ < 0) {
    return absl::InternalError(
        absl::StrCat("timerfd_create failed: ", std::strerror(errno)));
  }
  if (wake_fd_ < 0) {
    return absl::InternalError(
        absl::StrCat("eventfd failed: ", std::strerror(errno)));
  }
  thread_ = std::thread([this] {
    loop_thread_.BindToCurrentThread();
    loop_thread_.AssertOnOwner();
    // Shown by top -H and in /proc/PID/task/*/comm (15 characters at most).
    pthread_setname_np(pthread_self(), "engine_loop");
    Run();
  });
  return absl::OkStatus();
}

void CurlLoop::Stop() {
  if (!thread_.joinable()) return;
  assert(thread_.get_id() != std::this_thread::get_id());
  stopping_.store(true, std::memory_order_release);
  Wakeup();
  thread_.join();
}

void CurlLoop::Wakeup() {
  const uint64_t one = 1;
  // Fails only with EAGAIN, when the counter is about to overflow: the loop
  // has 2^64 - 2 wake-ups unread and is being woken anyway.
  [[maybe_unused]] const ssize_t written = write(wake_fd_, &one, sizeof(one));
}

absl::Status CurlLoop::AddTransfer(CURL* easy) {
  loop_thread_.AssertOnOwner();
  const CURLMcode code = curl_multi_add_handle(multi_, easy);
  if (code != CURLM_OK) {
    return absl::InternalError(
        absl::StrCat("curl_multi_add_handle: ", curl_multi_strerror(code)));
  }
  return absl::OkStatus();
}

void CurlLoop::RemoveTransfer(CURL* easy) {
  loop_thread_.AssertOnOwner();
  curl_multi_remove_handle(multi_, easy);
}

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

void CurlLoop::Run() {
  while (true) {
    iterations_.fetch_add(1, std::memory_order_relaxed);
    callbacks_.OnWakeup();
    FireDueTimers();
    bool curl_ok = Perform();
    DrainFinishedTransfers();
    if (stopping_.load(std::memory_order_acquire)) break;

    absl::Time wake_by = callbacks_.BeforeWait();
    // Without the timerfd, curl_multi_poll's timeout covers the next timer.
    if (!SetTimerFd()) wake_by = std::min(wake_by, timers_.next());
    if (curl_ok) curl_ok = Poll(wake_by);
    if (curl_ok) {
      backoff_ = absl::ZeroDuration();
    } else {
      // Poll failed without sleeping, or perform failed and poll might
      // return at once on the sockets it left unread: wait without curl
      // instead of spinning, longer each consecutive failing iteration.
      backoff_ = std::clamp(2 * backoff_, kFirstBackoff, kMaxBackoff);
      BackOff(wake_by, backoff_);
    }
  }
  callbacks_.OnStop();
}

bool CurlLoop::Perform() {
  int running = 0;
  // CURLM_OK even when transfers failed (they are reported through
  // curl_multi_info_read); an error means the multi handle itself could not
  // proceed, such as running out of memory.
  const CURLMcode code = curl_multi_perform(multi_, &running);
  if (code == CURLM_OK) return true;
  LogOnce(perform_error_logged_,
          absl::StrCat("curl_multi_perform: ", curl_multi_strerror(code)));
  return false;
}

bool CurlLoop::Poll(absl::Time wake_by) {
  curl_waitfd waits[] = {{timer_fd_, CURL_WAIT_POLLIN, 0},
                        {wake_fd_, CURL_WAIT_POLLIN, 0}};
  int ready = 0;
  // Fails, without waiting, if poll() itself fails (other than EINTR, which
  // libcurl reports as a timeout) or the multi handle cannot be used.
  const CURLMcode code = curl_multi_poll(multi_, waits, 2,
                                         PollTimeoutMillis(wake_by), &ready);
  if (code != CURLM_OK) {
    LogOnce(poll_error_logged_,
            absl::StrCat("curl_multi_poll: ", curl_multi_strerror(code)));
    return false;
  }
  if (waits[1].revents != 0) ReadWakeFd();
  if (waits[0].revents != 0) ReadTimerFd();
  return true;
}

void CurlLoop::BackOff(absl::Time wake_by, absl::Duration backoff) {
  const int timeout =
      std::min(PollTimeoutMillis(wake_by),
               static_cast<int>(absl::ToInt64Milliseconds(backoff)));
  pollfd timer_wait{timer_fd_, POLLIN, 0};
  // A failure here (EINTR, ENOMEM) only shortens the wait.
  if (poll(&timer_wait, 1, timeout) > 0) ReadTimerFd();
}

void CurlLoop::ReadWakeFd() {
  // One read takes every wake-up written so far (the counter resets).
  uint64_t wakeups;
  [[maybe_unused]] const ssize_t got = read(wake_fd_, &wakeups, sizeof(wakeups));
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
    callbacks_.OnTimer(*key);
  }
}

void CurlLoop::DrainFinishedTransfers() {
  int queued = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &queued)) {
    if (message->msg != CURLMSG_DONE) continue;
    // Copy before the callback removes the handle (which frees `message`).
    CURL* const easy = message->easy_handle;
    const CURLcode result = message->data.result;
    callbacks_.OnTransferDone(easy, result);
  }
}

bool CurlLoop::SetTimerFd() {
  const absl::Time next = timers_.next();
  if (next == timer_fd_armed_for_) return true;
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

int CurlLoop::PollTimeoutMillis(absl::Time wake_by) {
  long millis = -1;
  curl_multi_timeout(multi_, &millis);
  if (millis < 0 || millis > kIdlePollMillis) millis = kIdlePollMillis;
  if (wake_by != absl::InfiniteFuture()) {
    const absl::Duration wait =
        std::max(wake_by - clock_.Now(), absl::ZeroDuration());
    millis = std::min(millis, static_cast<long>(absl::ToInt64Milliseconds(
                                  absl::Ceil(wait, absl::Milliseconds(1)))));
  }
  return static_cast<int>(millis);
}

}  // namespace tailgate::hedge::transport
