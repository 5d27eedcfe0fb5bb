#include "experiment/replicas/flapping_replica.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

// Whether 127.0.0.1:port accepts a TCP connection.
bool Accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool connected =
      connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return connected;
}

int PortOf(const std::string& url) {
  return std::stoi(url.substr(url.rfind(':') + 1));
}

TEST(FlappingReplicaTest, KillsAndRestartsOnTheSamePort) {
  std::vector<int> ports;        // each port the factory was asked for
  absl::Notification restarted;  // the factory's second call: a restart
  absl::StatusOr<std::unique_ptr<FlappingReplica>> flapping =
      FlappingReplica::Start([&ports, &restarted](int port) {
        ports.push_back(port);
        if (ports.size() == 2) restarted.Notify();
        testing::ReplicaOptions options;
        options.port = port;
        return testing::Replica::Start(
            testing::Always(testing::ReplicaResponse()), options);
      });
  ASSERT_TRUE(flapping.ok()) << flapping.status();
  const int port = PortOf((*flapping)->url());
  EXPECT_TRUE(Accepts(port));

  (*flapping)->StartFlapping(absl::Milliseconds(5), absl::Milliseconds(5));
  // Real time: the cycle is the replica's, not a policy's.
  ASSERT_TRUE(restarted.WaitForNotificationWithTimeout(absl::Seconds(10)));
  absl::StatusOr<FlapCount> count = (*flapping)->StopFlapping();
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_GE(count->kills, 1);
  EXPECT_EQ(count->restarts, count->kills);
  ASSERT_EQ(count->kill_times.size(), static_cast<size_t>(count->kills));
  ASSERT_EQ(count->restart_times.size(), static_cast<size_t>(count->kills));
  for (int64_t i = 0; i < count->kills; ++i) {
    // Killed after at least one 5 ms up phase, restarted after it.
    EXPECT_GE(count->kill_times[i], absl::Milliseconds(5 * (2 * i + 1)));
    EXPECT_GE(count->restart_times[i], count->kill_times[i]);
    if (i > 0) {
      EXPECT_GE(count->kill_times[i], count->restart_times[i - 1]);
    }
  }
  EXPECT_TRUE(Accepts(port)) << "up again after StopFlapping";
  ASSERT_EQ(ports.size(), static_cast<size_t>(count->restarts) + 1);
  EXPECT_EQ(ports.front(), 0);
  for (size_t i = 1; i < ports.size(); ++i) EXPECT_EQ(ports[i], port);
}

TEST(FlappingReplicaTest, AFailedRestartIsReported) {
  int starts = 0;
  absl::Notification refused;  // the factory failed a restart
  absl::StatusOr<std::unique_ptr<FlappingReplica>> flapping =
      FlappingReplica::Start(
          [&starts, &refused](
              int port) -> absl::StatusOr<std::unique_ptr<testing::Replica>> {
            if (starts++ > 0) {
              if (!refused.HasBeenNotified()) refused.Notify();
              return absl::UnavailableError("no more");
            }
            testing::ReplicaOptions options;
            options.port = port;
            return testing::Replica::Start(
                testing::Always(testing::ReplicaResponse()), options);
          });
  ASSERT_TRUE(flapping.ok()) << flapping.status();
  (*flapping)->StartFlapping(absl::Milliseconds(1), absl::Milliseconds(1));
  ASSERT_TRUE(refused.WaitForNotificationWithTimeout(absl::Seconds(10)));
  absl::StatusOr<FlapCount> count = (*flapping)->StopFlapping();
  ASSERT_FALSE(count.ok());
  EXPECT_TRUE(absl::StrContains(count.status().message(), "restarting"))
      << count.status();
  EXPECT_TRUE(absl::StrContains(count.status().message(), "no more"));
}

}  // namespace
}  // namespace tailgate::experiment
