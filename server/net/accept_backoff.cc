#include "server/net/accept_backoff.h"

#include <errno.h>
#include <event2/event.h>
#include <event2/listener.h>

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "hedge/sync/mutex.h"

namespace tailgate::server {
namespace {

// libevent hands an error callback the listener and the accept callback's
// argument (evhttp's, here), not one of ours: the backoff is found by its
// listener. Listeners of different threads share the table.
hedge::Mutex registry_mu;
absl::flat_hash_map<evconnlistener*, AcceptBackoff*>& Registry()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(registry_mu) {
  static auto* registry = new absl::flat_hash_map<evconnlistener*, AcceptBackoff*>;
  return *registry;
}

AcceptBackoff* Find(evconnlistener* listener) {
  hedge::MutexLock lock(&registry_mu);
  auto it = Registry().find(listener);
  return it == Registry().end() ? nullptr : it->second;
}

}  // namespace

std::unique_ptr<AcceptBackoff> AcceptBackoff::Install(evconnlistener* listener,
                                                      event_base* base,
                                                      absl::Duration pause,
                                                      Report report) {
  std::unique_ptr<AcceptBackoff> backoff(
      new AcceptBackoff(listener, pause, std::move(report)));
  backoff->resume_ = evtimer_new(base, &AcceptBackoff::OnResume, backoff.get());
  {
    hedge::MutexLock lock(&registry_mu);
    Registry()[listener] = backoff.get();
  }
  evconnlistener_set_error_cb(listener, &AcceptBackoff::OnError);
  return backoff;
}

AcceptBackoff::~AcceptBackoff() {
  evconnlistener_set_error_cb(listener_, nullptr);
  {
    hedge::MutexLock lock(&registry_mu);
    Registry().erase(listener_);
  }
  if (resume_ != nullptr) event_free(resume_);
}

void AcceptBackoff::OnError(evconnlistener* listener, void*) noexcept {
  const int error = EVUTIL_SOCKET_ERROR();
  AcceptBackoff* self = Find(listener);
  if (self == nullptr) return;
  ++self->failures_;
  ++self->unreported_;
  // Pause; the timer resumes accepting. A failure while already paused
  // cannot happen (the listener is disabled), so each pause reports once.
  evconnlistener_disable(listener);
  ++self->pauses_;
  if (self->report_) self->report_(error, self->unreported_);
  self->unreported_ = 0;
  const timeval delay = absl::ToTimeval(self->pause_);
  evtimer_add(self->resume_, &delay);
}

void AcceptBackoff::OnResume(int, short, void* arg) noexcept {
  auto* self = static_cast<AcceptBackoff*>(arg);
  evconnlistener_enable(self->listener_);
}

}  // namespace tailgate::server
