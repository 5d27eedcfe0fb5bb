// DoorHarness: what an in-process test of a front door (server/http_door,
// server/read_door) starts the door on: a FakeLoopEngine, which is also
// the loop the door is lent, and the read core with what it refers to.
// And the loopback helpers such tests share.
//
// Example:
//   DoorHarness harness;
//   ASSERT_TRUE(harness.Start(64, 1 << 20, absl::Seconds(5)).ok());
//   ... HttpDoor::Start(options, harness.core(), harness.engine()) ...
//   FakeLoopEngine::Submitted read = harness.Read(0);
//   harness.engine().Answer(read.id, DoorHarness::Response(200, "ok"));
//   ... destroy the door, then harness.Stop() (or the destructor) ...
//
// Thread safety: Start, Stop and the accessors from the test's thread;
// the engine's and the core's own contracts hold for what they return.

#ifndef TAILGATE_SERVER_TESTING_DOOR_HARNESS_H_
#define TAILGATE_SERVER_TESTING_DOOR_HARNESS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "hedge/transport/engine.h"
#include "server/read/drain.h"
#include "server/read/read_call.h"
#include "server/read/rejections.h"
#include "server/read/response_memory.h"
#include "server/testing/fake_loop_engine.h"

namespace tailgate::server::testing {

class DoorHarness {
 public:
  // How long the helpers below wait for what a test expects.
  static constexpr absl::Duration kWait = absl::Seconds(10);

  DoorHarness() = default;
  ~DoorHarness() { Stop(); }
  DoorHarness(const DoorHarness&) = delete;
  DoorHarness& operator=(const DoorHarness&) = delete;

  // Starts the engine and the core: `max_calls` and `max_bytes` are the
  // core's --max_requests and --max_buffered_bytes, `send_timeout` its
  // --send_timeout; reads' deadlines are capped at 30 s.
  absl::Status Start(int64_t max_calls, int64_t max_bytes,
                     absl::Duration send_timeout);
  // The core, then the engine. REQUIRES: the door is gone.
  void Stop();

  FakeLoopEngine& engine() { return *engine_; }
  ReadCore& core() { return *core_; }
  ResponseMemory& memory() { return *memory_; }
  Rejections& rejections() { return rejections_; }
  DrainGate& gate() { return gate_; }

  // The `index`-th read the door submitted; EXPECTs one within kWait.
  FakeLoopEngine::Submitted Read(size_t index);
  // True once the core holds no call (every answer sent or dropped), within
  // kWait.
  bool WaitForNoCalls();

  // An engine answer with `status` and `body`, from one attempt.
  static hedge::EngineResponse Response(int status, std::string body);

 private:
  std::unique_ptr<FakeLoopEngine> engine_;
  DrainGate gate_;
  Rejections rejections_;
  std::unique_ptr<ResponseMemory> memory_;
  std::unique_ptr<ReadCore> core_;
};

// A TCP connection to `port` on 127.0.0.1, with a receive buffer of
// `receive_buffer` bytes if positive (the kernel's default otherwise); -1
// if it cannot be made.
int ConnectToLoopback(int port, int receive_buffer = 0);

// Writes all of `bytes` to `fd`; false if the socket fails first.
bool SendAll(int fd, absl::string_view bytes);

}  // namespace tailgate::server::testing

#endif  // TAILGATE_SERVER_TESTING_DOOR_HARNESS_H_
