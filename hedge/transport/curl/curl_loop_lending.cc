// How the loop is lent: guests' tasks (Post, RunOnLoop) and the engine
// that attaches as the loop's callbacks (Attach, Detach). The rest of
// CurlLoop is in curl_loop.cc (curl_loop.h has the contract).

#include <cassert>
#include <utility>
#include <vector>

#include "hedge/transport/curl/curl_loop.h"

namespace tailgate::hedge::transport {

bool CurlLoop::Post(Task task) {
  bool wake = false;
  {
    MutexLock lock(&tasks_mu_);
    if (tasks_closed_) return false;
    wake = tasks_.empty();
    tasks_.push_back(std::move(task));
  }
  if (wake) Wakeup();
  return true;
}

absl::Status CurlLoop::RunOnLoop(Task task) {
  if (Post(std::move(task))) return absl::OkStatus();
  return absl::FailedPreconditionError("the event loop is not running");
}

bool CurlLoop::RunAndWait(absl::AnyInvocable<void()> step) {
  assert(!OnLoopThread());
  Mutex mu;
  CondVar ran_changed;
  bool ran = false;
  const bool posted = Post([&](event_base*) {
    step();
    MutexLock lock(&mu);
    ran = true;
    ran_changed.SignalAll();
  });
  if (!posted) return false;
  MutexLock lock(&mu);
  while (!ran) ran_changed.Wait(&mu);
  return true;
}

absl::Status CurlLoop::Attach(Callbacks& callbacks, const Options& options) {
  bool attached = false;
  const bool ran = RunAndWait([&] {
    loop_thread_.AssertOnOwner();
    if (callbacks_ != nullptr) return;
    callbacks_ = &callbacks;
    timer_spin_ = options.timer_spin;
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, options.max_connections);
    attached = true;
  });
  if (!ran)
    return absl::FailedPreconditionError("the event loop is not running");
  if (!attached) {
    return absl::FailedPreconditionError(
        "the event loop serves an engine already");
  }
  return absl::OkStatus();
}

void CurlLoop::Detach(Callbacks& callbacks) {
  RunAndWait([this, &callbacks] {
    loop_thread_.AssertOnOwner();
    if (callbacks_ != &callbacks) return;
    callbacks_->OnStop();
    callbacks_ = nullptr;
    timers_ = TimerHeap();
    pending_timers_.store(0, std::memory_order_relaxed);
  });
}

bool CurlLoop::RunTasks() {
  std::vector<Task> tasks;
  {
    MutexLock lock(&tasks_mu_);
    if (tasks_.empty()) return false;
    tasks.swap(tasks_);
  }
  for (Task& task : tasks) task(base_);
  return true;
}

}  // namespace tailgate::hedge::transport
