// ReadDoorTest: the fixture of the read door's in-process tests
// (read_door_test.cc: calls and services; read_door_abuse_test.cc: what a
// hostile client sends). The real ReadDoor, served on a FakeLoopEngine's
// loop, driven over loopback by a grpc++ channel, and by raw HTTP/2 frames
// (server/testing/raw_h2_frames.h) where a client must misbehave. The
// engine's side of every read is the test's: it sees what the door
// submitted and answers, fails or waits for the door to cancel it.

#ifndef TAILGATE_SERVER_READ_DOOR_READ_DOOR_FIXTURE_H_
#define TAILGATE_SERVER_READ_DOOR_READ_DOOR_FIXTURE_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/net/listen_address.h"
#include "server/read/drain.h"
#include "server/read/rejections.h"
#include "server/read/response_memory.h"
#include "server/read_door/read_door.h"
#include "server/services/serving_state.h"
#include "server/testing/async_read.h"
#include "server/testing/door_harness.h"
#include "server/testing/fake_loop_engine.h"
#include "server/testing/raw_grpc.h"

namespace tailgate::server::read_door {

inline constexpr absl::Duration kWait = testing::DoorHarness::kWait;

// A Read call started on `stub` for `path`.
inline std::unique_ptr<testing::AsyncRead> StartRead(v1::HedgedRead::Stub& stub,
                                                     const std::string& path) {
  auto call = std::make_unique<testing::AsyncRead>();
  call->request.set_path(path);
  call->context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::seconds(30));
  call->Start(stub);
  return call;
}

class ReadDoorTest : public ::testing::Test {
 protected:
  // Starts the engine, the core and the door (serving health and
  // reflection); `max_calls` and `max_bytes` are the core's --max_requests
  // and --max_buffered_bytes, options.send_timeout its --send_timeout too.
  void Start(int64_t max_calls = 64, int64_t max_bytes = 1 << 20,
             ReadDoorOptions options = {}) {
    ASSERT_TRUE(
        harness_.Start(max_calls, max_bytes, options.send_timeout).ok());
    engine_ = &harness_.engine();
    memory_ = &harness_.memory();
    absl::StatusOr<ListenAddress> address = ParseListenAddress("127.0.0.1:0");
    ASSERT_TRUE(address.ok()) << address.status();
    options.address = *address;
    options.serving_state = &serving_;
    absl::StatusOr<std::unique_ptr<ReadDoor>> door =
        ReadDoor::Start(options, harness_.core(), harness_.engine());
    ASSERT_TRUE(door.ok()) << door.status();
    door_ = *std::move(door);
    port_ = door_->address().port;
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::HedgedRead::NewStub(channel_);
  }

  void TearDown() override {
    stub_.reset();
    channel_.reset();
    door_.reset();
    harness_.Stop();
  }

  testing::FakeLoopEngine::Submitted Read(size_t index) {
    return harness_.Read(index);
  }
  bool WaitForNoCalls() { return harness_.WaitForNoCalls(); }

  // The serving status Health/Check reports for `service`; -1 on error.
  int Check(const std::string& service) {
    absl::StatusOr<int> status = testing::HealthCheck(channel_, service);
    EXPECT_TRUE(status.ok()) << status.status();
    return status.value_or(-1);
  }

  services::ServingState serving_{true};
  testing::DoorHarness harness_;
  testing::FakeLoopEngine* engine_ = nullptr;
  ResponseMemory* memory_ = nullptr;
  Rejections& rejections_ = harness_.rejections();
  DrainGate& gate_ = harness_.gate();
  std::unique_ptr<ReadDoor> door_;
  int port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::HedgedRead::Stub> stub_;
};

}  // namespace tailgate::server::read_door

#endif  // TAILGATE_SERVER_READ_DOOR_READ_DOOR_FIXTURE_H_
