#include "server/circuit_log.h"

#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

absl::Time FixedNow() { return absl::FromUnixSeconds(0); }

std::string Drain(int fd) {
  std::string got;
  char buf[512];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) got.append(buf, n);
  return got;
}

TEST(CircuitLogTest, OneLinePerTransitionOpeningIsAWarning) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  {
    Logger log(LogFormat::kLogfmt, fds[1], &FixedNow);
    CircuitLog observer(log);
    observer.OnCircuitTransition("", "http://a:8001",
                                 hedge::CircuitState::kClosed,
                                 hedge::CircuitState::kOpen, 3);
    observer.OnCircuitTransition("blue", "http://a:8001",
                                 hedge::CircuitState::kOpen,
                                 hedge::CircuitState::kHalfOpen, 4);
  }
  close(fds[1]);
  EXPECT_EQ(Drain(fds[0]),
            "ts=1970-01-01T00:00:00.000000Z level=warn event=circuit "
            "upstream=default replica=http://a:8001 from=closed to=open "
            "generation=3\n"
            "ts=1970-01-01T00:00:00.000000Z level=info event=circuit "
            "upstream=blue replica=http://a:8001 from=open to=half_open "
            "generation=4\n");
  close(fds[0]);
}

}  // namespace
}  // namespace tailgate::server
