#include "server/grpc/grpc_server.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/testing/raw_grpc.h"

namespace tailgate::server {
namespace {

using ::tailgate::server::testing::HealthCheck;
using ::tailgate::server::testing::kNotServing;
using ::tailgate::server::testing::kServing;
using ::tailgate::server::testing::ReflectionListServices;
using ::testing::Contains;

class GrpcServerTest : public ::testing::Test {
 protected:
  GrpcListener Start(const std::string& address) {
    absl::StatusOr<GrpcListener> listener =
        StartGrpcServer(*ParseListenAddress(address), {&service_});
    EXPECT_TRUE(listener.ok()) << listener.status();
    return listener.ok() ? *std::move(listener) : GrpcListener();
  }

  static std::shared_ptr<grpc::Channel> Connect(const GrpcListener& listener) {
    return grpc::CreateChannel(listener.address.ToString(),
                               grpc::InsecureChannelCredentials());
  }

  // Unimplemented methods are enough: these tests are about the listener.
  v1::HedgedRead::CallbackService service_;
};

TEST_F(GrpcServerTest, ReportsTheEphemeralPortItBound) {
  GrpcListener listener = Start("127.0.0.1:0");
  ASSERT_NE(listener.server, nullptr);
  EXPECT_GT(listener.address.port, 0);
  EXPECT_EQ(HealthCheck(Connect(listener), "").value_or(-1), kServing);
}

TEST_F(GrpcServerTest, HealthFollowsSetReadServing) {
  GrpcListener listener = Start("127.0.0.1:0");
  ASSERT_NE(listener.server, nullptr);
  auto channel = Connect(listener);
  const std::string read_service = v1::HedgedRead::service_full_name();
  SetReadServing(*listener.server, true);
  EXPECT_EQ(HealthCheck(channel, "").value_or(-1), kServing);
  EXPECT_EQ(HealthCheck(channel, read_service).value_or(-1), kServing);
  SetReadServing(*listener.server, false);
  EXPECT_EQ(HealthCheck(channel, "").value_or(-1), kNotServing);
  EXPECT_EQ(HealthCheck(channel, read_service).value_or(-1), kNotServing);
  EXPECT_EQ(HealthCheck(channel, "no.such.Service").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(GrpcServerTest, AdminIsServingOnceSet) {
  GrpcListener listener = Start("127.0.0.1:0");
  ASSERT_NE(listener.server, nullptr);
  auto channel = Connect(listener);
  const std::string admin_service = v1::Admin::service_full_name();
  EXPECT_EQ(HealthCheck(channel, admin_service).status().code(),
            absl::StatusCode::kNotFound);
  SetAdminServing(*listener.server);
  EXPECT_EQ(HealthCheck(channel, admin_service).value_or(-1), kServing);
}

TEST_F(GrpcServerTest, ReflectionListsTheServices) {
  GrpcListener listener = Start("127.0.0.1:0");
  ASSERT_NE(listener.server, nullptr);
  absl::StatusOr<std::vector<std::string>> services =
      ReflectionListServices(Connect(listener));
  ASSERT_TRUE(services.ok()) << services.status();
  EXPECT_THAT(*services, Contains("tailgate.v1.HedgedRead"));
  EXPECT_THAT(*services, Contains("grpc.health.v1.Health"));
}

TEST_F(GrpcServerTest, AnAddressInUseFailsInsteadOfSharingThePort) {
  GrpcListener first = Start("127.0.0.1:0");
  ASSERT_NE(first.server, nullptr);
  v1::HedgedRead::CallbackService other;
  absl::StatusOr<GrpcListener> second =
      StartGrpcServer(first.address, {&other});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(second.status().message(),
            absl::StrCat("cannot listen on ", first.address.ToString()));
}

TEST_F(GrpcServerTest, ListensOnAUnixSocket) {
  // TEST_TMPDIR is too deep for sun_path's 108 bytes.
  const std::string address =
      absl::StrCat("unix:/tmp/tailgate_grpc_server_test.", getpid(), ".sock");
  GrpcListener listener = Start(address);
  ASSERT_NE(listener.server, nullptr);
  EXPECT_EQ(listener.address.ToString(), address);
  EXPECT_EQ(HealthCheck(Connect(listener), "").value_or(-1), kServing);
  listener.server->Shutdown();
  unlink(listener.address.path.c_str());
}

}  // namespace
}  // namespace tailgate::server
