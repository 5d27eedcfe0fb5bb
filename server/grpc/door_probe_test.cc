#include "server/grpc/door_probe.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"

namespace tailgate::server {
namespace {

using ::testing::HasSubstr;

constexpr absl::Duration kDeadline = absl::Milliseconds(500);

ListenAddress Loopback(int port) {
  ListenAddress address;
  address.host = "127.0.0.1";
  address.port = port;
  return address;
}

ListenAddress UnixAt(const std::string& path) {
  ListenAddress address;
  address.is_unix = true;
  address.path = path;
  return address;
}

absl::Status ProbeOnce(const ListenAddress& door) {
  return DoorProbe(door, kDeadline, absl::ZeroDuration()).Check();
}

// A loopback TCP socket bound to an ephemeral port; listening when asked.
struct LoopbackSocket {
  explicit LoopbackSocket(bool listening) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address),
              0);
    socklen_t length = sizeof address;
    EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length),
              0);
    port = ntohs(address.sin_port);
    if (listening) {
      EXPECT_EQ(::listen(fd, 16), 0);
    }
  }
  ~LoopbackSocket() { ::close(fd); }

  int fd = -1;
  int port = 0;
};

// A gRPC server (the library's, as the thing probed) on `address`, with the
// default health service or none. The server needs a service of its own to
// start; HedgedRead's unimplemented methods are enough.
struct HealthServer {
  HealthServer(const std::string& address, bool health) {
    grpc::EnableDefaultHealthCheckService(health);
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
  }
  ~HealthServer() {
    if (server != nullptr) server->Shutdown(absl::ToChronoTime(absl::Now()));
  }

  v1::HedgedRead::CallbackService service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

TEST(DoorProbeTest, ADoorThatAcceptsAndNeverAnswersFailsByTheDeadline) {
  LoopbackSocket listener(/*listening=*/true);
  int accepted = -1;
  std::thread acceptor(
      [&] { accepted = ::accept(listener.fd, nullptr, nullptr); });
  const absl::Time start = absl::Now();
  const absl::Status status = ProbeOnce(Loopback(listener.port));
  const absl::Duration took = absl::Now() - start;
  acceptor.join();
  if (accepted >= 0) ::close(accepted);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("no answer within"));
  EXPECT_GE(took, kDeadline);
  EXPECT_LT(took, kDeadline + absl::Seconds(1));
}

TEST(DoorProbeTest, NothingListeningFailsNamingTheConnectFailure) {
  int port = 0;
  {
    LoopbackSocket closed(/*listening=*/false);
    port = closed.port;
  }
  const absl::Status status = ProbeOnce(Loopback(port));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("connect: Connection refused"));
  EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("127.0.0.1:", port)));
}

TEST(DoorProbeTest, NoUnixSocketFailsNamingTheConnectFailure) {
  const absl::Status status =
      ProbeOnce(UnixAt("/nonexistent/door_probe_test.sock"));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("connect: No such file"));
}

TEST(DoorProbeTest, ADoorAnsweringServingIsLive) {
  HealthServer door("127.0.0.1:0", /*health=*/true);
  ASSERT_NE(door.server, nullptr);
  const absl::Status status = ProbeOnce(Loopback(door.port));
  EXPECT_TRUE(status.ok()) << status;
}

TEST(DoorProbeTest, ADoorOnAUnixSocketAnsweringServingIsLive) {
  const std::string path =
      absl::StrCat("/tmp/door_probe_test.", ::getpid(), ".sock");
  ::unlink(path.c_str());
  {
    HealthServer door(absl::StrCat("unix:", path), /*health=*/true);
    ASSERT_NE(door.server, nullptr);
    const absl::Status status = ProbeOnce(UnixAt(path));
    EXPECT_TRUE(status.ok()) << status;
  }
  ::unlink(path.c_str());
}

TEST(DoorProbeTest, ADrainingDoorAnsweringNotServingIsLive) {
  HealthServer door("127.0.0.1:0", /*health=*/true);
  ASSERT_NE(door.server, nullptr);
  door.server->GetHealthCheckService()->SetServingStatus(false);
  const absl::Status status = ProbeOnce(Loopback(door.port));
  EXPECT_TRUE(status.ok()) << status;
}

TEST(DoorProbeTest, ADoorWithoutAHealthServiceIsNotLive) {
  HealthServer door("127.0.0.1:0", /*health=*/false);
  ASSERT_NE(door.server, nullptr);
  const absl::Status status = ProbeOnce(Loopback(door.port));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("grpc-status 12"));
}

TEST(DoorProbeTest, AResultIsReusedWithinTheInterval) {
  auto door = std::make_unique<HealthServer>("127.0.0.1:0", /*health=*/true);
  ASSERT_NE(door->server, nullptr);
  DoorProbe probe(Loopback(door->port), kDeadline, absl::Hours(1));
  EXPECT_TRUE(probe.Check().ok());
  door.reset();
  EXPECT_TRUE(probe.Check().ok());  // the first answer, not a new probe
}

}  // namespace
}  // namespace tailgate::server
