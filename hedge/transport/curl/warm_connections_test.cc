// WarmConnections::Expect: an address that joins (a resolved name's) is
// warmed ahead of its first attempt, on the FakeClock's refill schedule.

#include "hedge/transport/curl/warm_connections.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "tests/fake_clock.h"

namespace tailgate::hedge::transport {
namespace {

// A listening socket on 127.0.0.1; the kernel completes connects to it.
class Listener {
 public:
  Listener() : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    listen(fd_, 16);
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~Listener() { close(fd_); }
  int port() const { return port_; }

 private:
  const int fd_;
  int port_ = 0;
};

constexpr absl::Duration kRefillDelay = absl::Milliseconds(1);

TEST(WarmConnectionsTest, ExpectedAddressIsWarmedAfterTheRefillDelay) {
  Listener replica;
  testing::FakeClock clock;
  WarmConnections warm(clock, {2, absl::Seconds(30), kRefillDelay});
  warm.Expect("127.0.0.1", replica.port());
  EXPECT_EQ(warm.Refill(), clock.Now() + kRefillDelay);  // not yet
  EXPECT_EQ(warm.stats().opened, 0u);
  clock.Advance(kRefillDelay);
  warm.Refill();
  EXPECT_EQ(warm.stats().opened, 2u);
  EXPECT_EQ(warm.stats().idle, 2);
  // Known now: a second Expect opens nothing more.
  warm.Expect("127.0.0.1", replica.port());
  clock.Advance(kRefillDelay);
  warm.Refill();
  EXPECT_EQ(warm.stats().opened, 2u);
}

TEST(WarmConnectionsTest, ExpectIgnoresNamesAndDoesNothingWithoutPreconnect) {
  Listener replica;
  testing::FakeClock clock;
  WarmConnections warm(clock, {2, absl::Seconds(30), kRefillDelay});
  warm.Expect("replica.test", replica.port());
  WarmConnections off(clock, {0, absl::Seconds(30), kRefillDelay});
  off.Expect("127.0.0.1", replica.port());
  clock.Advance(kRefillDelay);
  EXPECT_EQ(warm.Refill(), absl::InfiniteFuture());
  off.Refill();
  EXPECT_EQ(warm.stats().opened, 0u);
  EXPECT_EQ(off.stats().opened, 0u);
}

TEST(WarmConnectionsTest, ExpectTakesBracketedIpv6) {
  testing::FakeClock clock;
  WarmConnections warm(clock, {1, absl::Seconds(30), kRefillDelay});
  warm.Expect("[::1]", 9);  // nothing listens: the connect may fail, but
  clock.Advance(kRefillDelay);  // the pool was made and topped up once
  warm.Refill();
  EXPECT_EQ(warm.stats().opened, 1u);
}

}  // namespace
}  // namespace tailgate::hedge::transport
