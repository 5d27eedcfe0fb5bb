#include "tests/replica/silent_listener.h"

#include <event2/listener.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "hedge/sync/mutex.h"
#include "tests/replica/event_loop_thread.h"
#include "tests/replica/loopback.h"

namespace tailgate::testing {

namespace {

// A TCP socket bound to 127.0.0.1 at a port the kernel chooses; the caller
// owns `fd`.
struct BoundSocket {
  int fd;
  int port;
};

absl::StatusOr<BoundSocket> BindLoopback() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  }
  const sockaddr_in address = LoopbackAddress(0);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) !=
      0) {
    const int error = errno;
    close(fd);
    return absl::InternalError(absl::StrCat("bind: ", std::strerror(error)));
  }
  absl::StatusOr<int> port = LocalPort(fd);
  if (!port.ok()) {
    close(fd);
    return port.status();
  }
  return BoundSocket{fd, *port};
}

}  // namespace

absl::StatusOr<int> RefusingLoopbackPort() {
  absl::StatusOr<BoundSocket> bound = BindLoopback();
  if (!bound.ok()) return bound.status();
  // The socket is left open on purpose: it holds the port until exit.
  return bound->port;
}

absl::StatusOr<int> UnusedLoopbackPort() {
  absl::StatusOr<BoundSocket> bound = BindLoopback();
  if (!bound.ok()) return bound.status();
  close(bound->fd);
  return bound->port;
}

class SilentListener::Impl {
 public:
  explicit Impl(std::unique_ptr<EventLoopThread> loop)
      : loop_(std::move(loop)) {}

  ~Impl() {
    loop_->Stop();
    if (listener_ != nullptr) evconnlistener_free(listener_);
    for (int fd : accepted_) close(fd);
  }

  absl::Status Listen() {
    absl::StatusOr<evconnlistener*> listener =
        ListenOnLoopback(loop_->base(), 0, &Impl::OnAccept, this);
    if (!listener.ok()) return listener.status();
    listener_ = *listener;
    absl::StatusOr<int> port = LocalPort(evconnlistener_get_fd(listener_));
    if (!port.ok()) return port.status();
    port_ = *port;
    loop_->Start();
    return absl::OkStatus();
  }

  int port() const { return port_; }

  int64_t connections_accepted() const {
    hedge::MutexLock lock(&mu_);
    return connections_accepted_;
  }

  bool WaitForConnections(int64_t n, absl::Duration timeout) const {
    const absl::Time deadline = absl::Now() + timeout;
    hedge::MutexLock lock(&mu_);
    bool timed_out = false;
    while (connections_accepted_ < n && !timed_out) {
      timed_out = accepted_changed_.WaitWithDeadline(&mu_, deadline);
    }
    return connections_accepted_ >= n;
  }

 private:
  static void OnAccept(evconnlistener*, evutil_socket_t fd, sockaddr*, int,
                       void* arg) noexcept {
    auto* self = static_cast<Impl*>(arg);
    self->accepted_.push_back(fd);  // held open, never read
    {
      hedge::MutexLock lock(&self->mu_);
      ++self->connections_accepted_;
    }
    self->accepted_changed_.SignalAll();
  }

  const std::unique_ptr<EventLoopThread> loop_;
  evconnlistener* listener_ = nullptr;  // constant after Listen
  int port_ = 0;                        // constant after Listen
  std::vector<int> accepted_;           // loop thread only

  // (hedge::Mutex rather than absl::Mutex: see hedge/sync/mutex.h.)
  mutable hedge::Mutex mu_;
  mutable hedge::CondVar accepted_changed_;
  int64_t connections_accepted_ ABSL_GUARDED_BY(mu_) = 0;
};

absl::StatusOr<std::unique_ptr<SilentListener>> SilentListener::Start() {
  absl::StatusOr<std::unique_ptr<EventLoopThread>> loop =
      EventLoopThread::Create();
  if (!loop.ok()) return loop.status();
  auto impl = std::make_unique<Impl>(*std::move(loop));
  if (absl::Status listening = impl->Listen(); !listening.ok()) {
    return listening;
  }
  return std::unique_ptr<SilentListener>(new SilentListener(std::move(impl)));
}

SilentListener::SilentListener(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
SilentListener::~SilentListener() = default;

int SilentListener::port() const { return impl_->port(); }
std::string SilentListener::url() const {
  return absl::StrCat("http://127.0.0.1:", impl_->port());
}
int64_t SilentListener::connections_accepted() const {
  return impl_->connections_accepted();
}
bool SilentListener::WaitForConnections(int64_t n,
                                        absl::Duration timeout) const {
  return impl_->WaitForConnections(n, timeout);
}

}  // namespace tailgate::testing
