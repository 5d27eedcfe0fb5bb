#include "experiment/load/grpc_read_target.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

TEST(GrpcReadErrorTest, Labels) {
  ReadResponse ok;
  ok.status = 200;
  ok.body = "replicated-value";
  EXPECT_EQ(GrpcReadError(ok), "");
  ReadResponse upstream_error = ok;
  upstream_error.status = 503;
  EXPECT_EQ(GrpcReadError(upstream_error), "http_503");
  ReadResponse wrong = ok;
  wrong.body = "stale";
  EXPECT_EQ(GrpcReadError(wrong), kWrongBody);
  EXPECT_EQ(GrpcReadError(absl::DeadlineExceededError("late")),
            "DEADLINE_EXCEEDED");
  EXPECT_EQ(GrpcReadError(absl::UnavailableError("gone")), "UNAVAILABLE");
}

}  // namespace
}  // namespace tailgate::experiment
