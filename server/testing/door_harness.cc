#include "server/testing/door_harness.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <utility>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace tailgate::server::testing {

absl::Status DoorHarness::Start(int64_t max_calls, int64_t max_bytes,
                                absl::Duration send_timeout) {
  absl::StatusOr<std::unique_ptr<FakeLoopEngine>> engine =
      FakeLoopEngine::Create();
  if (!engine.ok()) return engine.status();
  engine_ = *std::move(engine);
  memory_ = std::make_unique<ResponseMemory>(max_calls, max_bytes);
  rejections_.WatchResponseMemory(memory_.get());
  core_ = std::make_unique<ReadCore>(
      *engine_, gate_, rejections_, *memory_,
      ReadCoreLimits{absl::Seconds(30), send_timeout});
  return absl::OkStatus();
}

void DoorHarness::Stop() {
  core_.reset();
  engine_.reset();
}

FakeLoopEngine::Submitted DoorHarness::Read(size_t index) {
  std::optional<FakeLoopEngine::Submitted> read =
      engine_->WaitForRead(index, kWait);
  EXPECT_TRUE(read.has_value()) << "no read " << index << " submitted";
  return read.value_or(FakeLoopEngine::Submitted{});
}

bool DoorHarness::WaitForNoCalls() {
  const absl::Time deadline = absl::Now() + kWait;
  while (memory_->calls() != 0) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

hedge::EngineResponse DoorHarness::Response(int status, std::string body) {
  hedge::EngineResponse response;
  response.status = status;
  response.body = std::move(body);
  response.trace.attempts = 1;
  return response;
}

int ConnectToLoopback(int port, int receive_buffer) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (receive_buffer > 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer,
               sizeof(receive_buffer));
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace tailgate::server::testing
