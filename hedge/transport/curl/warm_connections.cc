#include "hedge/transport/curl/warm_connections.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace tailgate::hedge::transport {
namespace {

constexpr absl::Duration kSweepEvery = absl::Seconds(1);

int NewSocket(int family, int socktype, int protocol) {
  return socket(family, socktype | SOCK_CLOEXEC, protocol);
}

std::string PeerKey(absl::string_view ip, long port) {
  return absl::StrCat(ip, " ", port);
}

// "ip port" of an IPv4 or IPv6 socket address; "" for any other family.
std::string PeerKey(const sockaddr* address) {
  char ip[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
    return PeerKey(ip, ntohs(in->sin_port));
  }
  if (address->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
    return PeerKey(ip, ntohs(in6->sin6_port));
  }
  return "";
}

}  // namespace

WarmConnections::WarmConnections(Clock& clock, Options options)
    : clock_(clock), options_(options) {}

WarmConnections::~WarmConnections() {
  for (auto& [key, pool] : pools_) {
    for (const Warm& warm : pool.idle) close(warm.fd);
  }
}

void WarmConnections::Attach(CURL* easy) {
  loop_thread_.AssertOnOwner();
  if (options_.per_address <= 0) return;
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION,
                   &WarmConnections::OnOpenSocket);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, this);
  curl_easy_setopt(easy, CURLOPT_SOCKOPTFUNCTION,
                   &WarmConnections::OnSocketOption);
  curl_easy_setopt(easy, CURLOPT_SOCKOPTDATA, this);
}

curl_socket_t WarmConnections::OnOpenSocket(void* self, curlsocktype purpose,
                                            curl_sockaddr* address) noexcept {
  if (purpose != CURLSOCKTYPE_IPCXN) {
    return NewSocket(address->family, address->socktype, address->protocol);
  }
  auto* const warm = static_cast<WarmConnections*>(self);
  warm->loop_thread_.AssertOnOwner();  // curl_multi_socket_action calls back
  return warm->OpenSocket(*address);
}

int WarmConnections::OnSocketOption(void* self, curl_socket_t fd,
                                    curlsocktype) noexcept {
  auto* const warm = static_cast<WarmConnections*>(self);
  warm->loop_thread_.AssertOnOwner();  // curl_multi_socket_action calls back
  // Erasing first: a warm fd is reported as connected exactly once.
  return warm->handed_out_.erase(fd) > 0 ? CURL_SOCKOPT_ALREADY_CONNECTED
                                         : CURL_SOCKOPT_OK;
}

WarmConnections::Pool* WarmConnections::PoolFor(std::string key, int family,
                                                const sockaddr* address,
                                                size_t length) {
  auto it = pools_.find(key);
  if (it == pools_.end() && !key.empty() &&
      static_cast<int>(pools_.size()) < kMaxAddresses) {
    Pool pool;
    pool.family = family;
    pool.socktype = SOCK_STREAM;
    pool.protocol = IPPROTO_TCP;
    pool.address.assign(reinterpret_cast<const char*>(address),
                        std::min<size_t>(length, sizeof(sockaddr_storage)));
    it = pools_.emplace(std::move(key), std::move(pool)).first;
  }
  if (it == pools_.end()) return nullptr;
  Pool& pool = it->second;
  if (pool.wanted_since == absl::InfiniteFuture()) {
    pool.wanted_since = clock_.Now();
    ++wanted_pools_;
  }
  return &pool;
}

void WarmConnections::Expect(absl::string_view ip, int port) {
  loop_thread_.AssertOnOwner();
  if (options_.per_address <= 0) return;
  absl::ConsumePrefix(&ip, "[");
  absl::ConsumeSuffix(&ip, "]");
  const std::string text(ip);
  sockaddr_storage address = {};
  size_t length = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    length = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    length = sizeof(sockaddr_in6);
  } else {
    return;
  }
  const sockaddr* raw = reinterpret_cast<const sockaddr*>(&address);
  std::string key = PeerKey(raw);
  if (pools_.contains(key)) return;  // curl, or an earlier Expect, was there
  PoolFor(std::move(key), address.ss_family, raw, length);
}

curl_socket_t WarmConnections::OpenSocket(const curl_sockaddr& address) {
  // curl's `addr` is followed by room for the longest address: addrlen
  // bytes are valid even though the member is only a struct sockaddr.
  Pool* const found = PoolFor(PeerKey(&address.addr), address.family,
                              &address.addr, address.addrlen);
  if (found != nullptr) {
    Pool& pool = *found;
    const absl::Time now = clock_.Now();
    const int fd = TakeReady(pool, now);
    if (fd >= 0) {
      handed_out_.insert(fd);
      used_.fetch_add(1, std::memory_order_relaxed);
      return fd;
    }
  }
  return NewSocket(address.family, address.socktype, address.protocol);
}

int WarmConnections::TakeReady(Pool& pool, absl::Time now) {
  for (size_t i = 0; i < pool.idle.size();) {
    const Warm warm = pool.idle[i];
    switch (Check(warm, now)) {
      case Health::kReady:
        pool.idle.erase(pool.idle.begin() + i);
        idle_.fetch_sub(1, std::memory_order_relaxed);
        return warm.fd;
      case Health::kConnecting:
        ++i;
        break;
      case Health::kDead:
        pool.idle.erase(pool.idle.begin() + i);
        Discard(warm.fd);
        break;
    }
  }
  return -1;
}

WarmConnections::Health WarmConnections::Check(const Warm& warm,
                                               absl::Time now) const {
  if (now - warm.opened > options_.max_idle) return Health::kDead;
  pollfd probe{warm.fd, POLLIN | POLLOUT | POLLRDHUP, 0};
  if (poll(&probe, 1, 0) < 0) return Health::kDead;
  // An HTTP or TLS server never speaks first: anything readable is a close,
  // a reset or garbage. A hard error (refused, reset, timed out) shows as
  // POLLERR or POLLHUP, so SO_ERROR need not be read: a system call saved
  // on the hand-out, which is on the attempt's path. (A soft ICMP error,
  // which only SO_ERROR reports, then fails the attempt as a connect
  // failure instead.)
  if ((probe.revents & (POLLIN | POLLRDHUP | POLLERR | POLLHUP)) != 0) {
    return Health::kDead;
  }
  return (probe.revents & POLLOUT) != 0 ? Health::kReady : Health::kConnecting;
}

absl::Time WarmConnections::Refill() {
  loop_thread_.AssertOnOwner();
  const absl::Time now = clock_.Now();
  const bool sweep = now - last_sweep_ >= kSweepEvery;
  if (wanted_pools_ == 0 && !sweep) return absl::InfiniteFuture();
  if (sweep) last_sweep_ = now;
  absl::Time next = absl::InfiniteFuture();
  for (auto& [key, pool] : pools_) {
    if (sweep) Sweep(pool, now);
    if (pool.wanted_since == absl::InfiniteFuture()) continue;
    const absl::Time due = pool.wanted_since + options_.refill_delay;
    if (due <= now) {
      TopUp(pool);
    } else {
      next = std::min(next, due);
    }
  }
  return next;
}

void WarmConnections::ForgetPeerOf(CURL* easy) {
  loop_thread_.AssertOnOwner();
  if (pools_.empty()) return;
  char* ip = nullptr;
  long port = 0;
  if (curl_easy_getinfo(easy, CURLINFO_PRIMARY_IP, &ip) != CURLE_OK ||
      ip == nullptr || ip[0] == '\0' ||
      curl_easy_getinfo(easy, CURLINFO_PRIMARY_PORT, &port) != CURLE_OK) {
    return;  // never connected
  }
  auto it = pools_.find(PeerKey(ip, port));
  if (it == pools_.end()) return;
  Pool& pool = it->second;
  Unwant(pool);
  for (const Warm& warm : pool.idle) Discard(warm.fd);
  pool.idle.clear();
}

void WarmConnections::Sweep(Pool& pool, absl::Time now) {
  auto dead = std::stable_partition(
      pool.idle.begin(), pool.idle.end(),
      [&](const Warm& warm) { return Check(warm, now) != Health::kDead; });
  for (auto it = dead; it != pool.idle.end(); ++it) Discard(it->fd);
  pool.idle.erase(dead, pool.idle.end());
}

void WarmConnections::Unwant(Pool& pool) {
  if (pool.wanted_since == absl::InfiniteFuture()) return;
  pool.wanted_since = absl::InfiniteFuture();
  --wanted_pools_;
}

void WarmConnections::TopUp(Pool& pool) {
  Unwant(pool);
  while (static_cast<int>(pool.idle.size()) < options_.per_address) {
    const int fd =
        NewSocket(pool.family, pool.socktype | SOCK_NONBLOCK, pool.protocol);
    if (fd < 0) return;
    opened_.fetch_add(1, std::memory_order_relaxed);
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, reinterpret_cast<const sockaddr*>(pool.address.data()),
                static_cast<socklen_t>(pool.address.size())) != 0 &&
        errno != EINPROGRESS) {
      // Refused at once: no retry until curl connects there again.
      discarded_.fetch_add(1, std::memory_order_relaxed);
      close(fd);
      return;
    }
    pool.idle.push_back(Warm{fd, clock_.Now()});
    idle_.fetch_add(1, std::memory_order_relaxed);
  }
}

void WarmConnections::Discard(int fd) {
  discarded_.fetch_add(1, std::memory_order_relaxed);
  idle_.fetch_sub(1, std::memory_order_relaxed);
  close(fd);
}

WarmConnectionStats WarmConnections::stats() const {
  WarmConnectionStats stats;
  stats.opened = opened_.load(std::memory_order_relaxed);
  stats.used = used_.load(std::memory_order_relaxed);
  stats.discarded = discarded_.load(std::memory_order_relaxed);
  stats.idle = idle_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace tailgate::hedge::transport
