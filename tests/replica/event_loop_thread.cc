#include "tests/replica/event_loop_thread.h"

#include <event2/thread.h>
#include <pthread.h>
#include <signal.h>

#include "absl/status/status.h"

namespace tailgate::testing {
namespace {

bool UsePthreads() {
  static const bool ok = evthread_use_pthreads() == 0;
  return ok;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EventLoopThread>> EventLoopThread::Create() {
  if (!UsePthreads()) {
    return absl::InternalError("evthread_use_pthreads failed");
  }
  // Timers on libevent's default clock (CLOCK_MONOTONIC_COARSE) can fire a
  // tick (up to 4 ms) early; delays must never be short.
  event_config* config = event_config_new();
  if (config == nullptr) return absl::InternalError("event_config_new failed");
  event_config_set_flag(config, EVENT_BASE_FLAG_PRECISE_TIMER);
  event_base* base = event_base_new_with_config(config);
  event_config_free(config);
  if (base == nullptr) return absl::InternalError("event_base_new failed");
  event* stop_event = event_new(base, -1, 0, &EventLoopThread::OnStop, base);
  if (stop_event == nullptr) {
    event_base_free(base);
    return absl::InternalError("event_new failed");
  }
  return std::unique_ptr<EventLoopThread>(
      new EventLoopThread(base, stop_event));
}

EventLoopThread::EventLoopThread(event_base* base, event* stop_event)
    : base_(base), stop_event_(stop_event) {}

EventLoopThread::~EventLoopThread() {
  Stop();
  event_free(stop_event_);
  event_base_free(base_);
}

void EventLoopThread::Start() {
  thread_ = std::thread([this] { Run(); });
}

void EventLoopThread::Stop() {
  if (!thread_.joinable()) return;
  // An active event, unlike event_base_loopbreak, is not lost if the loop
  // has not started yet: event_base_loop clears the break flag on entry.
  event_active(stop_event_, EV_READ, 0);
  thread_.join();
}

bool EventLoopThread::InLoopThread() const {
  return std::this_thread::get_id() == loop_thread_id_.load();
}

void EventLoopThread::Run() {
  loop_thread_id_.store(std::this_thread::get_id());
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  event_base_loop(base_, EVLOOP_NO_EXIT_ON_EMPTY);
}

void EventLoopThread::OnStop(evutil_socket_t, short, void* arg) noexcept {
  event_base_loopbreak(static_cast<event_base*>(arg));
}

}  // namespace tailgate::testing
