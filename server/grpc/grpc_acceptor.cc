#include "server/grpc/grpc_acceptor.h"

#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <grpcpp/server.h>
#include <grpcpp/server_posix.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mutex>
#include <utility>

#include "absl/time/time.h"
#include "server/net/listen_socket.h"

namespace tailgate::server {
namespace {

// The destructor breaks the loop from another thread.
void UseThreads() {
  static std::once_flag once;
  std::call_once(once, [] { evthread_use_pthreads(); });
}

bool InodeOf(int fd, ino_t* inode) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
  *inode = st.st_ino;
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcAcceptor>> GrpcAcceptor::Start(
    const ListenAddress& address, grpc::Server* server, Options options) {
  UseThreads();
  absl::StatusOr<int> fd = OpenListeningSocket(address);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<GrpcAcceptor> acceptor(
      new GrpcAcceptor(server, std::move(options)));
  acceptor->address_ = address;
  if (!address.is_unix) {
    absl::StatusOr<int> port = LocalPort(*fd);
    if (!port.ok()) {
      close(*fd);
      return port.status();
    }
    acceptor->address_ = address.WithPort(*port);
  }
  acceptor->base_ = event_base_new();
  if (acceptor->base_ != nullptr) {
    acceptor->stop_ =
        event_new(acceptor->base_, -1, 0, &GrpcAcceptor::OnStop,
                  acceptor->base_);
    acceptor->listener_ = evconnlistener_new(
        acceptor->base_, &GrpcAcceptor::OnAccept, acceptor.get(),
        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, *fd);
  }
  if (acceptor->listener_ == nullptr || acceptor->stop_ == nullptr) {
    if (acceptor->listener_ == nullptr) close(*fd);
    return absl::InternalError(
        absl::StrCat("cannot accept on ", address.ToString()));
  }
  acceptor->backoff_ = AcceptBackoff::Install(
      acceptor->listener_, acceptor->base_, absl::Seconds(1),
      acceptor->options_.accept_failed);
  acceptor->thread_ = std::thread([base = acceptor->base_] {
    event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY);
  });
  return acceptor;
}

GrpcAcceptor::~GrpcAcceptor() {
  if (thread_.joinable()) {
    event_active(stop_, EV_READ, 0);
    thread_.join();
  }
  backoff_.reset();  // before the listener it watches
  if (listener_ != nullptr) evconnlistener_free(listener_);  // closes it
  if (stop_ != nullptr) event_free(stop_);
  if (base_ != nullptr) event_base_free(base_);
  if (address_.is_unix) unlink(address_.path.c_str());
}

void GrpcAcceptor::OnStop(int, short, void* base) noexcept {
  event_base_loopbreak(static_cast<event_base*>(base));
}

void GrpcAcceptor::OnAccept(evconnlistener*, int fd, sockaddr* address, int,
                            void* self) noexcept {
  static_cast<GrpcAcceptor*>(self)->Accept(
      fd, address != nullptr && (address->sa_family == AF_INET ||
                                 address->sa_family == AF_INET6));
}

void GrpcAcceptor::Accept(int fd, bool tcp) {
  if (open_.size() >= static_cast<size_t>(options_.max_connections) &&
      Sweep() >= static_cast<size_t>(options_.max_connections)) {
    close(fd);
    const uint64_t refused = refused_.fetch_add(1) + 1;
    if (options_.refused) options_.refused(refused);
    return;
  }
  ino_t inode = 0;
  if (!InodeOf(fd, &inode)) {
    close(fd);
    return;
  }
  if (tcp) {
    // gRPC sets this on the sockets it accepts itself; without it a small
    // answer can wait for a delayed ACK.
    const int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  }
  open_[fd] = inode;  // a descriptor number reused since is replaced
  grpc::AddInsecureChannelFromFd(server_, fd);
}

size_t GrpcAcceptor::Sweep() {
  for (auto it = open_.begin(); it != open_.end();) {
    ino_t inode = 0;
    if (!InodeOf(it->first, &inode) || inode != it->second) {
      it = open_.erase(it);
    } else {
      ++it;
    }
  }
  return open_.size();
}

}  // namespace tailgate::server
