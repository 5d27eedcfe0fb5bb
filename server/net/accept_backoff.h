// AcceptBackoff: what a libevent listener does when accept() fails, most
// often because the process is out of file descriptors (EMFILE, ENFILE).
// libevent's default is to warn and try again at once, which spins and
// writes a line per attempt (millions in seconds). Instead the listener
// pauses for `pause`, reports the error to `report` at most once per pause,
// and resumes by itself, so that it serves again once descriptors are free.
//
// Example:
//   auto backoff = AcceptBackoff::Install(
//       evhttp_bound_socket_get_listener(bound), base, absl::Seconds(1),
//       [&log](int error) { log.Warn("accept_failed", ...); });
//
// Thread safety: everything runs on the listener's event loop thread; the
// object must be destroyed on it or after the loop has stopped, and before
// the event base.
#ifndef TAILGATE_SERVER_NET_ACCEPT_BACKOFF_H_
#define TAILGATE_SERVER_NET_ACCEPT_BACKOFF_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/time/time.h"

struct event;
struct event_base;
struct evconnlistener;

namespace tailgate::server {

class AcceptBackoff {
 public:
  // `report(errno, failures_since_last_report)`.
  using Report = std::function<void(int, uint64_t)>;

  static std::unique_ptr<AcceptBackoff> Install(evconnlistener* listener,
                                                event_base* base,
                                                absl::Duration pause,
                                                Report report);
  ~AcceptBackoff();
  AcceptBackoff(const AcceptBackoff&) = delete;
  AcceptBackoff& operator=(const AcceptBackoff&) = delete;

  uint64_t failures() const { return failures_; }
  uint64_t pauses() const { return pauses_; }

 private:
  AcceptBackoff(evconnlistener* listener, absl::Duration pause, Report report)
      : listener_(listener), pause_(pause), report_(std::move(report)) {}
  static void OnError(evconnlistener* listener, void* self) noexcept;
  static void OnResume(int fd, short what, void* self) noexcept;

  evconnlistener* const listener_;
  const absl::Duration pause_;
  const Report report_;
  event* resume_ = nullptr;
  uint64_t failures_ = 0;
  uint64_t unreported_ = 0;
  uint64_t pauses_ = 0;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_NET_ACCEPT_BACKOFF_H_
