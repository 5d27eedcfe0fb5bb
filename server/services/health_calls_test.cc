#include "server/services/health_calls.h"

#include <string>

#include "gtest/gtest.h"
#include "proto/grpc/health/v1/health.pb.h"

namespace tailgate::server::services {
namespace {

namespace health = ::grpc::health::v1;

std::string Request(const std::string& service) {
  health::HealthCheckRequest request;
  request.set_service(service);
  return request.SerializeAsString();
}

int StatusIn(const std::string& answer) {
  health::HealthCheckResponse response;
  EXPECT_TRUE(response.ParseFromString(answer));
  return response.status();
}

TEST(HealthCallsTest, CheckReportsTheSidecarAndHedgedReadAsTheStateSays) {
  for (const std::string service : {"", "tailgate.v1.HedgedRead"}) {
    absl::StatusOr<std::string> serving = AnswerHealthCheck(Request(service), true);
    ASSERT_TRUE(serving.ok()) << serving.status();
    EXPECT_EQ(StatusIn(*serving), health::HealthCheckResponse::SERVING);
    absl::StatusOr<std::string> draining =
        AnswerHealthCheck(Request(service), false);
    ASSERT_TRUE(draining.ok()) << draining.status();
    EXPECT_EQ(StatusIn(*draining), health::HealthCheckResponse::NOT_SERVING);
  }
  // The bytes the liveness probe and clients see: field 1, varint.
  EXPECT_EQ(*AnswerHealthCheck("", true), std::string("\x08\x01"));
  EXPECT_EQ(*AnswerHealthCheck("", false), std::string("\x08\x02"));
}

TEST(HealthCallsTest, CheckRefusesUnknownServicesAndBadRequests) {
  absl::StatusOr<std::string> unknown =
      AnswerHealthCheck(Request("tailgate.v1.Admin"), true);
  EXPECT_EQ(unknown.status(), absl::NotFoundError("service name unknown"));
  const absl::Status bad = absl::InvalidArgumentError("could not parse request");
  EXPECT_EQ(AnswerHealthCheck("\xff", true).status(), bad);
  EXPECT_EQ(AnswerHealthCheck(Request(std::string(201, 's')), true).status(),
            bad);
  // 200 bytes is a name (unknown), not a bad request.
  EXPECT_EQ(AnswerHealthCheck(Request(std::string(200, 's')), true)
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

TEST(HealthCallsTest, WatchFollowsKnownServicesAndReportsOthersUnknown) {
  absl::StatusOr<HealthWatchStart> known =
      StartHealthWatch(Request("tailgate.v1.HedgedRead"), false);
  ASSERT_TRUE(known.ok()) << known.status();
  EXPECT_TRUE(known->follows_serving);
  EXPECT_EQ(known->first, HealthStatus::kNotServing);
  absl::StatusOr<HealthWatchStart> unknown =
      StartHealthWatch(Request("no.such.Service"), true);
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_FALSE(unknown->follows_serving);
  EXPECT_EQ(unknown->first, HealthStatus::kServiceUnknown);
  EXPECT_EQ(StatusIn(HealthResponse(unknown->first)),
            health::HealthCheckResponse::SERVICE_UNKNOWN);
  EXPECT_EQ(StartHealthWatch("\xff", true).status(),
            absl::InternalError("could not parse request"));
}

}  // namespace
}  // namespace tailgate::server::services
