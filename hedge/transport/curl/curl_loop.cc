#include "hedge/transport/curl/curl_loop.h"

#include <event2/event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hedge/transport/curl/curl_support.h"

namespace tailgate::hedge::transport {
namespace {

// With no transfer and no timer the loop sleeps until woken; the base's
// wait still gets a finite timeout.
constexpr absl::Duration kIdleWait = absl::Seconds(60);

// Back-off after an iteration whose curl call or wait failed: doubles per
// consecutive failing iteration, from the first to the last.
constexpr absl::Duration kFirstBackoff = absl::Milliseconds(1);
constexpr absl::Duration kMaxBackoff = absl::Milliseconds(100);

// A fresh read or fallback asks curl for a timeout of 0 (run now); the
// loop serves that before it sleeps, this many times per iteration at most.
constexpr int kMaxImmediateActions = 4;

// The base: epoll, without a lock (only the loop thread touches it), with
// the change list so that the re-arms of one iteration cost one epoll_ctl
// per descriptor at most (its caveat, descriptors cloned with dup(), does
// not apply: neither curl nor the guests make any).
event_base* NewBase() {
  event_config* config = event_config_new();
  if (config == nullptr) return nullptr;
  event_config_set_flag(config, EVENT_BASE_FLAG_NOLOCK);
  event_config_set_flag(config, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
  event_base* base = event_base_new_with_config(config);
  event_config_free(config);
  return base;
}

// libcurl's global state first: the loop may be the process's first user.
CURLM* NewMulti() {
  InitCurlOnce();
  return curl_multi_init();
}

}  // namespace

#if defined(__SANITIZE_THREAD__)
// libcurl 7.88 closes a socket that is still connecting (a transfer removed
// before its connection was made, such as a cancelled hedge's) with close()
// and only then tells the socket callback CURL_POLL_REMOVE. The base's
// epoll_ctl(EPOLL_CTL_DEL) for it can then name a number another thread has
// reused meanwhile, which ThreadSanitizer reports as a race on that
// descriptor. The kernel answers ENOENT (the number's new socket is not in
// this base's epoll set) and libevent ignores ENOENT on a delete; a number
// this loop reuses before the change list is applied is re-added (libevent
// never merges an add after a delete into nothing). Only the event bases
// call epoll_ctl, so this silences descriptor reports and nothing else.
extern "C" const char* __tsan_default_suppressions() {
  return "race:epoll_ctl\n";
}
#endif

CurlLoop::CurlLoop(Clock& clock)
    : clock_(clock),
      multi_(NewMulti()),
      base_(NewBase()),
      timer_fd_(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)),
      wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (multi_ != nullptr) {
    curl_multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlLoop::OnCurlSocket);
    curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlLoop::OnCurlTimer);
    curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  }
  if (base_ != nullptr && timer_fd_ >= 0 && wake_fd_ >= 0) {
    timer_event_ = event_new(base_, timer_fd_, EV_READ | EV_PERSIST,
                             &CurlLoop::OnTimerFd, this);
    wake_event_ = event_new(base_, wake_fd_, EV_READ | EV_PERSIST,
                            &CurlLoop::OnWakeFd, this);
    wait_event_ = event_new(base_, -1, 0, &CurlLoop::OnWaitOver, this);
  }
}

CurlLoop::~CurlLoop() {
  Stop();
  // The loop thread is gone (or never ran): this one takes what it owned,
  // for the callbacks curl makes as it cleans up.
  loop_thread_.Detach();
  loop_thread_.AssertOnOwner();
  if (multi_ != nullptr) curl_multi_cleanup(multi_);
  // Watches curl did not let go of, then the base.
  for (event* watch : watches_) event_free(watch);
  for (event* watch : retired_watches_) event_free(watch);
  for (curl_socket_t fd : closing_) close(fd);
  for (event* own : {timer_event_, wake_event_, wait_event_}) {
    if (own != nullptr) event_free(own);
  }
  if (base_ != nullptr) event_base_free(base_);
  if (timer_fd_ >= 0) close(timer_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

void CurlLoop::LogOnce(bool& logged, const std::string& message) {
  if (logged) return;
  logged = true;
  std::fprintf(stderr, "curl_loop: %s (further ones are not logged)\n",
               message.c_str());
}

absl::Status CurlLoop::Start() {
  if (multi_ == nullptr) return absl::InternalError("curl_multi_init failed");
  if (base_ == nullptr) return absl::InternalError("event_base_new failed");
  if (timer_fd_ < 0) {
    return absl::InternalError(
        absl::StrCat("timerfd_create failed: ", std::strerror(errno)));
  }
  if (wake_fd_ < 0) {
    return absl::InternalError(
        absl::StrCat("eventfd failed: ", std::strerror(errno)));
  }
  if (timer_event_ == nullptr || wake_event_ == nullptr ||
      wait_event_ == nullptr || event_add(timer_event_, nullptr) != 0 ||
      event_add(wake_event_, nullptr) != 0) {
    return absl::InternalError("cannot watch the loop's own descriptors");
  }
  {
    MutexLock lock(&tasks_mu_);
    tasks_closed_ = false;
  }
  thread_ = std::thread([this] {
    loop_thread_.BindToCurrentThread();
    loop_thread_.AssertOnOwner();
    loop_thread_id_.store(std::this_thread::get_id(),
                          std::memory_order_relaxed);
    // Shown by top -H and in /proc/PID/task/*/comm (15 characters at most).
    pthread_setname_np(pthread_self(), "engine_loop");
    // A write to a socket whose peer has gone (a guest's client) must fail
    // with EPIPE, not kill the process (SIGPIPE goes to the writing thread).
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    Run();
    // A later thread may get the same id.
    loop_thread_id_.store(std::thread::id(), std::memory_order_relaxed);
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
  if (OnLoopThread()) {
    // The loop is awake: it only has to look again before it sleeps.
    loop_thread_.AssertOnOwner();
    woken_ = true;
    return;
  }
  const uint64_t one = 1;
  // Fails only with EAGAIN, when the counter is about to overflow: the loop
  // has 2^64 - 2 wake-ups unread and is being woken anyway.
  [[maybe_unused]] const ssize_t written = write(wake_fd_, &one, sizeof(one));
}

absl::Status CurlLoop::AddTransfer(CURL* easy) {
  loop_thread_.AssertOnOwner();
  // Every connection curl opens comes from a transfer added here, and
  // keeps the close callback of the transfer that opened it.
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, &CurlLoop::OnCurlClose);
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, this);
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

void CurlLoop::Run() {
  while (true) {
    iterations_.fetch_add(1, std::memory_order_relaxed);
    RunDueWork();
    if (stopping_.load(std::memory_order_acquire)) break;

    absl::Time wake_by = callbacks_ != nullptr ? callbacks_->BeforeWait()
                                               : absl::InfiniteFuture();
    // Without the timerfd, the base's timeout covers the next timer.
    if (!SetTimerFd()) wake_by = std::min(wake_by, timers_.next());
    // Work queued from this thread since OnWakeup: no sleep.
    if (woken_) continue;
    const bool failed = failed_;
    failed_ = false;
    if (!failed && Wait(wake_by)) {
      backoff_ = absl::ZeroDuration();
    } else {
      // The wait failed without sleeping, or curl failed and the sockets it
      // left unread might make the wait return at once: wait without the
      // base instead of spinning, longer each consecutive failing
      // iteration.
      backoff_ = std::clamp(2 * backoff_, kFirstBackoff, kMaxBackoff);
      BackOff(wake_by, backoff_);
    }
  }
  {
    MutexLock lock(&tasks_mu_);
    tasks_closed_ = true;
  }
  // Tasks posted before the close still run: a guest waiting for its
  // teardown is told.
  RunTasks();
  if (callbacks_ != nullptr) callbacks_->OnStop();
  callbacks_ = nullptr;
}

void CurlLoop::RunDueWork() {
  woken_ = false;
  if (callbacks_ != nullptr) callbacks_->OnWakeup();
  RunTasks();
  if (timers_.next() <= clock_.Now()) TakeInReadyEvents();
  FireDueTimers();
  DrainFinishedTransfers();
  // Transfers the work above added (a new read's attempt, a hedge, a
  // fallback) start now rather than after a wait.
  bool acted = false;
  for (int i = 0; i < kMaxImmediateActions; ++i) {
    if (curl_due_ > SteadyClock().Now()) break;
    curl_due_ = absl::InfiniteFuture();  // curl sets the next one
    SocketAction(CURL_SOCKET_TIMEOUT, 0);
    acted = true;
  }
  if (acted) DrainFinishedTransfers();
  for (event* watch : retired_watches_) event_free(watch);
  retired_watches_.clear();
}

void CurlLoop::TakeInReadyEvents() {
  // EVLOOP_NONBLOCK: runs the callbacks of the events ready now (and
  // applies the change list), without sleeping.
  if (event_base_loop(base_, EVLOOP_NONBLOCK) < 0) {
    failed_ = true;
    LogOnce(wait_error_logged_, "event_base_loop failed");
    return;
  }
  DrainFinishedTransfers();
}

void CurlLoop::SocketAction(curl_socket_t fd, int mask) {
  int running = 0;
  // CURLM_OK even when transfers failed (they are reported through
  // curl_multi_info_read); an error means the multi handle itself could not
  // proceed, such as running out of memory.
  const CURLMcode code = curl_multi_socket_action(multi_, fd, mask, &running);
  if (code == CURLM_OK) return;
  failed_ = true;
  LogOnce(action_error_logged_, absl::StrCat("curl_multi_socket_action: ",
                                             curl_multi_strerror(code)));
}

int CurlLoop::OnCurlSocket(CURL*, curl_socket_t fd, int what, void* loop,
                           void* watch) noexcept {
  auto* self = static_cast<CurlLoop*>(loop);
  self->loop_thread_.AssertOnOwner();  // curl calls back from the loop
  self->Watch(fd, what, static_cast<event*>(watch));
  return 0;
}

void CurlLoop::Watch(curl_socket_t fd, int what, event* watch) {
  const short events = EV_PERSIST | ((what & CURL_POLL_IN) != 0 ? EV_READ : 0) |
                       ((what & CURL_POLL_OUT) != 0 ? EV_WRITE : 0);
  if (watch != nullptr) {
    if (what != CURL_POLL_REMOVE && event_get_events(watch) == events) return;
    // Its callback may be the one running: freed after the callbacks.
    event_del(watch);
    watches_.erase(watch);
    retired_watches_.push_back(watch);
    curl_multi_assign(multi_, fd, nullptr);
  }
  if (what == CURL_POLL_REMOVE) return;
  watch = event_new(base_, fd, events, &CurlLoop::OnSocketReady, this);
  if (watch == nullptr || event_add(watch, nullptr) != 0) {
    // Out of memory: the transfer moves on with curl's timeouts, or its
    // read's deadline ends it.
    if (watch != nullptr) event_free(watch);
    failed_ = true;
    LogOnce(action_error_logged_, "cannot watch a socket of curl's");
    return;
  }
  watches_.insert(watch);
  curl_multi_assign(multi_, fd, watch);
}

int CurlLoop::OnCurlClose(void* loop, curl_socket_t fd) noexcept {
  auto* self = static_cast<CurlLoop*>(loop);
  self->loop_thread_.AssertOnOwner();  // curl calls back from the loop
  // Closed after the base's next epoll_wait, which applies the change list
  // (the socket's removal from epoll) while the descriptor is still this
  // socket's: closed first, its number could be reused by another thread
  // before the removal reaches it.
  self->closing_.push_back(fd);
  return 0;
}

int CurlLoop::OnCurlTimer(CURLM*, long timeout_ms, void* loop) noexcept {
  auto* self = static_cast<CurlLoop*>(loop);
  self->loop_thread_.AssertOnOwner();  // curl calls back from the loop
  // Served by RunDueWork, not from here (curl asks not to be re-entered).
  self->curl_due_ = timeout_ms < 0
                        ? absl::InfiniteFuture()
                        : SteadyClock().Now() + absl::Milliseconds(timeout_ms);
  return 0;
}

void CurlLoop::OnSocketReady(int fd, short what, void* loop) noexcept {
  auto* self = static_cast<CurlLoop*>(loop);
  self->loop_thread_.AssertOnOwner();
  const int mask = ((what & EV_READ) != 0 ? CURL_CSELECT_IN : 0) |
                   ((what & EV_WRITE) != 0 ? CURL_CSELECT_OUT : 0);
  self->SocketAction(fd, mask);
}

void CurlLoop::OnWakeFd(int, short, void* loop) noexcept {
  auto* self = static_cast<CurlLoop*>(loop);
  self->loop_thread_.AssertOnOwner();
  self->ReadWakeFd();
  // The inbox is drained in the next RunDueWork; when this ran inside one
  // (TakeInReadyEvents), the loop must not sleep before that.
  self->woken_ = true;
}

void CurlLoop::OnWaitOver(int, short, void*) noexcept {}

bool CurlLoop::Wait(absl::Time wake_by) {
  // A socket waiting to be closed (a cancelled attempt's, whose replica
  // should see it go at once): a wait that only applies the change list.
  const timeval wait = absl::ToTimeval(closing_.empty() ? WaitFor(wake_by)
                                                        : absl::ZeroDuration());
  // Re-arms it if a shorter wait left it pending.
  if (event_add(wait_event_, &wait) != 0) return false;
  // Sockets curl let go of before this wait: their removal from epoll is
  // applied by it.
  std::vector<curl_socket_t> closable;
  closable.swap(closing_);
  // Sleeps until an event is ready, then runs every ready one's callback.
  // Fails, without waiting, if epoll_wait itself fails (not for EINTR).
  const int result = event_base_loop(base_, EVLOOP_ONCE);
  if (result < 0) {
    // The change list may not have been applied: close them next time.
    closing_.insert(closing_.end(), closable.begin(), closable.end());
    LogOnce(wait_error_logged_, "event_base_loop failed");
    return false;
  }
  for (curl_socket_t fd : closable) close(fd);
  return true;
}

void CurlLoop::BackOff(absl::Time wake_by, absl::Duration backoff) {
  const absl::Duration wait = std::min(WaitFor(wake_by), backoff);
  const int timeout = static_cast<int>(
      absl::ToInt64Milliseconds(absl::Ceil(wait, absl::Milliseconds(1))));
  pollfd timer_wait{timer_fd_, POLLIN, 0};
  // A failure here (EINTR, ENOMEM) only shortens the wait.
  if (poll(&timer_wait, 1, timeout) > 0) ReadTimerFd();
}

void CurlLoop::ReadWakeFd() {
  // One read takes every wake-up written so far (the counter resets).
  uint64_t wakeups;
  [[maybe_unused]] const ssize_t got =
      read(wake_fd_, &wakeups, sizeof(wakeups));
}

void CurlLoop::DrainFinishedTransfers() {
  int queued = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &queued)) {
    if (message->msg != CURLMSG_DONE) continue;
    // Copy before the callback removes the handle (which frees `message`).
    CURL* const easy = message->easy_handle;
    const CURLcode result = message->data.result;
    // Every transfer is the attached engine's (Detach ends them all).
    if (callbacks_ != nullptr) callbacks_->OnTransferDone(easy, result);
  }
}

absl::Duration CurlLoop::WaitFor(absl::Time wake_by) {
  absl::Duration wait = kIdleWait;
  if (curl_due_ != absl::InfiniteFuture()) {
    wait = std::min(wait, curl_due_ - SteadyClock().Now());
  }
  if (wake_by != absl::InfiniteFuture()) {
    wait = std::min(wait, wake_by - clock_.Now());
  }
  return std::max(wait, absl::ZeroDuration());
}

}  // namespace tailgate::hedge::transport
