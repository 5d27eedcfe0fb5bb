#include "hedge/errors/field_error.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

TEST(FieldErrorTest, NamesTheFieldInMessageAndPayload) {
  const absl::Status status = FieldError("hedge_fraction", "must be in [0, 1]");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "hedge_fraction: must be in [0, 1]");
  EXPECT_EQ(ErrorField(status), "hedge_fraction");
  EXPECT_EQ(ErrorProblem(status), "must be in [0, 1]");
}

TEST(FieldErrorTest, OtherStatusesHaveNoField) {
  EXPECT_EQ(ErrorField(absl::OkStatus()), std::nullopt);
  const absl::Status plain = absl::InvalidArgumentError("timeout: made up");
  EXPECT_EQ(ErrorField(plain), std::nullopt);
  EXPECT_EQ(ErrorProblem(plain), "timeout: made up");
}

TEST(FieldErrorTest, AProblemThatRepeatsTheFieldKeepsIt) {
  const absl::Status status = FieldError("timeout", "timeout: twice");
  EXPECT_EQ(ErrorProblem(status), "timeout: twice");
}

TEST(FieldErrorTest, PrefixFieldRenamesOnlyFieldErrors) {
  const absl::Status prefixed =
      PrefixField("upstreams.images.", FieldError("hedge_delay", "too long"));
  EXPECT_EQ(ErrorField(prefixed), "upstreams.images.hedge_delay");
  EXPECT_EQ(ErrorProblem(prefixed), "too long");
  EXPECT_EQ(prefixed.message(), "upstreams.images.hedge_delay: too long");
  const absl::Status other = absl::UnavailableError("down");
  EXPECT_EQ(PrefixField("x.", other), other);
}

}  // namespace
}  // namespace tailgate::hedge
