#include "server/net/loop_guest.h"

#include <utility>

namespace tailgate::server {

absl::Status RunOnLoopAndWait(
    hedge::EventLoop& loop,
    absl::AnyInvocable<absl::Status(event_base*)> step) {
  hedge::Mutex mu;
  hedge::CondVar ran_changed;
  bool ran = false;
  absl::Status result;
  absl::Status posted = loop.RunOnLoop([&](event_base* base) {
    absl::Status status = step(base);
    hedge::MutexLock lock(&mu);
    result = std::move(status);
    ran = true;
    ran_changed.SignalAll();
  });
  if (!posted.ok()) return posted;
  hedge::MutexLock lock(&mu);
  while (!ran) ran_changed.Wait(&mu);
  return result;
}

void TearDownFromOutside(hedge::EventLoop& loop, hedge::ThreadChecker& owner,
                         absl::AnyInvocable<void()> begin,
                         absl::AnyInvocable<void()> finish,
                         TeardownLatch& latch) {
  const absl::Status posted = RunOnLoopAndWait(loop, [&](event_base*) {
    begin();
    return absl::OkStatus();
  });
  if (!posted.ok()) {
    owner.Detach();
    finish();
  }
  latch.Wait();
}

}  // namespace tailgate::server
