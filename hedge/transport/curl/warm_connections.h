// WarmConnections: TCP connections opened ahead of need, per destination
// address, handed to libcurl when it wants a new connection.
//
// Why: over HTTP/1.1 a cancelled loser takes its connection with it, so the
// next attempt on that replica pays a TCP handshake (0.2-0.4 ms on loopback
// here, a network round trip elsewhere) — and that attempt is often the
// hedge, the one the caller is waiting for.
//
// How: Attach() gives an attempt's easy handle the open-socket and
// socket-option callbacks. When curl wants a new connection to address X it
// calls OpenSocket: a live warm socket to X is handed over and curl is told
// it is already connected; otherwise a fresh socket is made, as curl would.
// Either way X now wants a replacement, and Refill() (called by the loop
// before it sleeps) starts non-blocking connects until X has `per_address`
// warm sockets again, once `refill_delay` has passed since X's first need
// after its last top-up (usually the hand-out itself).
//
// Why the delay: the hand-out happens in the loop iteration that sends the
// attempt's request, and Linux wakes the replica's reader on the sending
// CPU, expecting the sender to sleep next. A connect right behind the send
// (tens of microseconds of kernel work on loopback, the handshake included)
// made the replica wait for it, on the hedge's path in the seed experiment
// (docs/BENCHMARKS.md, "What changed the numbers"). Later, the loop is usually
// idle or busy with other reads' work, which a connect delays no more than any.
//
// A warm socket is handed out only when it is connected, has no error, has
// not been closed or written to by the peer, and is younger than
// `max_idle`; otherwise it is closed (or, while still connecting, left).
// Refill() also sweeps such sockets out about once a second while the loop
// is awake. Only addresses curl itself connected to are warmed, so no
// connection is made before a replica's first attempt — except the
// addresses Expect names: those of a resolved name, which join while reads
// run and are warmed ahead of their first attempt. None at all with
// per_address 0 (then Attach and Expect do nothing).
//
// Thread safety: loop thread only (curl calls back from
// curl_multi_socket_action): construction and destruction may happen on
// another thread, and the first thread to call a method becomes the owner (the
// loop_thread_ capability, checked by clang's -Wthread-safety at compile
// time and in debug builds at run time). stats() is safe from any thread.

#ifndef TAILGATE_HEDGE_TRANSPORT_CURL_WARM_CONNECTIONS_H_
#define TAILGATE_HEDGE_TRANSPORT_CURL_WARM_CONNECTIONS_H_

#include <curl/curl.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "hedge/clock.h"
#include "hedge/config/engine_config.h"
#include "hedge/sync/thread_checker.h"
#include "hedge/transport/curl/warm_connection_stats.h"

namespace tailgate::hedge::transport {

class WarmConnections {
 public:
  struct Options {
    int per_address =
        1;  // 0 disables; at most kMaxPreconnect (engine_config.h)
    absl::Duration max_idle = absl::Seconds(30);
    absl::Duration refill_delay = kPreconnectRefillDelay;
  };
  // Addresses warmed at once; beyond them curl makes its own sockets.
  static constexpr int kMaxAddresses = 256;

  WarmConnections(Clock& clock, Options options);
  ~WarmConnections();  // closes every warm socket
  WarmConnections(const WarmConnections&) = delete;
  WarmConnections& operator=(const WarmConnections&) = delete;

  // Sets the socket callbacks on `easy` (after each curl_easy_reset).
  void Attach(CURL* easy);

  // Starts the connects that handed-out sockets asked for at least
  // `refill_delay` ago; sweeps dead and old sockets at most once a second.
  // Returns when the next postponed top-up is due (InfiniteFuture if none):
  // the loop must call Refill again by then.
  absl::Time Refill();

  // Warms `ip`:`port` ("10.0.0.7" or "[fd00::7]") ahead of its first
  // attempt: the next Refill at least refill_delay from now connects
  // per_address sockets to it. Nothing for an address already pooled, one
  // that is not an IP literal, or beyond kMaxAddresses.
  void Expect(absl::string_view ip, int port);

  // Closes the spares to the peer `easy` last talked to: its attempt failed,
  // so they are suspect too. They come back only when curl connects there
  // again (a later attempt, such as the circuit's half-open probe).
  void ForgetPeerOf(CURL* easy);

  WarmConnectionStats stats() const;

 private:
  struct Warm {
    int fd;
    absl::Time opened;
  };
  struct Pool {
    int family = 0;
    int socktype = 0;
    int protocol = 0;
    std::string address;     // raw sockaddr bytes, for connect()
    std::vector<Warm> idle;  // oldest first
    // When Refill was first asked to top it up since its last top-up
    // (InfiniteFuture: not wanted); it does once refill_delay has passed.
    absl::Time wanted_since = absl::InfiniteFuture();
  };
  enum class Health { kReady, kConnecting, kDead };

  static curl_socket_t OnOpenSocket(void* self, curlsocktype purpose,
                                    curl_sockaddr* address) noexcept;
  static int OnSocketOption(void* self, curl_socket_t fd,
                            curlsocktype purpose) noexcept;
  curl_socket_t OpenSocket(const curl_sockaddr& address)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  // The pool of `key`, made from `address` if there is none and room for
  // it; null otherwise. A new pool is wanted from now on.
  Pool* PoolFor(std::string key, int family, const sockaddr* address,
                size_t length) ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  int TakeReady(Pool& pool, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  Health Check(const Warm& warm, absl::Time now) const;
  void TopUp(Pool& pool) ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void Unwant(Pool& pool) ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void Sweep(Pool& pool, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loop_thread_);
  void Discard(int fd);

  Clock& clock_;
  const Options options_;

  ThreadChecker loop_thread_;
  absl::flat_hash_map<std::string, Pool> pools_
      ABSL_GUARDED_BY(loop_thread_);  // by "ip port"
  absl::flat_hash_set<int> handed_out_
      ABSL_GUARDED_BY(loop_thread_);  // between the two callbacks
  int wanted_pools_ ABSL_GUARDED_BY(loop_thread_) = 0;
  absl::Time last_sweep_ ABSL_GUARDED_BY(loop_thread_) = absl::InfinitePast();

  std::atomic<uint64_t> opened_{0};
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> discarded_{0};
  std::atomic<int64_t> idle_{0};
};

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_CURL_WARM_CONNECTIONS_H_
