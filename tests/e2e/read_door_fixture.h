// ReadDoorE2eTest: TailgateE2eTest with the read door (--read_listen) on,
// and a HedgedRead stub on a channel of its own to it, beside the fixture's
// stub to the --listen server (reads_), so a test can ask both doors the
// same thing.
//
// Example:
//   TEST_F(ReadDoorE2eTest, Reads) {
//     AddReplica(Always(Body("ok")));
//     StartDoor({"--hedge_fraction=0"});
//     v1::ReadResponse response;
//     ASSERT_TRUE(DoorRead("/x", &response).ok());
//   }
//
// Thread safety: as TailgateE2eTest; door_ may be used from any thread.

#ifndef TAILGATE_TESTS_E2E_READ_DOOR_FIXTURE_H_
#define TAILGATE_TESTS_E2E_READ_DOOR_FIXTURE_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "tests/e2e/tailgate_e2e_fixture.h"

namespace tailgate::testing {

class ReadDoorE2eTest : public TailgateE2eTest {
 protected:
  // Starts tailgate on every replica added so far, with the read door on
  // an ephemeral port, and connects door_ to it.
  void StartDoor(std::vector<std::string> flags = {}) {
    flags.push_back("--read_listen=127.0.0.1:0");
    StartTailgate(std::move(flags));
    ASSERT_NE(tailgate_, nullptr);
    absl::StatusOr<std::string> address = tailgate_->ListeningAddress("read");
    ASSERT_TRUE(address.ok()) << address.status();
    door_address_ = *address;
    door_channel_ =
        grpc::CreateChannel(door_address_, grpc::InsecureChannelCredentials());
    door_ = v1::HedgedRead::NewStub(door_channel_);
  }

  grpc::Status DoorRead(const v1::ReadRequest& request,
                        v1::ReadResponse* response,
                        absl::Duration deadline = kWait) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    return door_->Read(&context, request, response);
  }

  grpc::Status DoorRead(const std::string& path, v1::ReadResponse* response) {
    v1::ReadRequest request;
    request.set_path(path);
    return DoorRead(request, response);
  }

  // Polls GetStats until `holds` is true of it or kWait passes; the last
  // stats seen.
  template <typename Predicate>
  v1::GetStatsResponse StatsWhen(Predicate holds) {
    const absl::Time give_up = absl::Now() + kWait;
    v1::GetStatsResponse stats = Stats();
    while (!holds(stats) && absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(5));
      stats = Stats();
    }
    return stats;
  }

  std::string door_address_;  // "127.0.0.1:PORT"
  std::shared_ptr<grpc::Channel> door_channel_;
  std::unique_ptr<v1::HedgedRead::Stub> door_;
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_E2E_READ_DOOR_FIXTURE_H_
