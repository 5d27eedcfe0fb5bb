#include "flags/flag_values.h"

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::flags {
namespace {

TEST(FlagValuesTest, IntegersAndTheirRange) {
  EXPECT_EQ(*ParseInteger("-12"), -12);
  EXPECT_EQ(ParseInteger("12x").status().message(),
            "want an integer, got \"12x\"");
  EXPECT_EQ(*ParseInteger("1", 1, 3), 1);
  EXPECT_EQ(*ParseInteger("3", 1, 3), 3);
  EXPECT_EQ(ParseInteger("0", 1, 3).status().message(),
            "must be in [1, 3], got 0");
  EXPECT_EQ(ParseInteger("4", 1, 3).status().message(),
            "must be in [1, 3], got 4");
  EXPECT_EQ(ParseInteger("99999999999999999999").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FlagValuesTest, NumbersMustBeFinite) {
  EXPECT_EQ(*ParseNumber("0.25"), 0.25);
  for (const char* bad : {"inf", "nan", "", "1/2"}) {
    EXPECT_EQ(ParseNumber(bad).status().message(),
              absl::StrCat("want a number, got \"", bad, "\""));
  }
}

TEST(FlagValuesTest, DurationsNeedAUnitAndAreFiniteUnlessAllowed) {
  EXPECT_EQ(*ParseDuration("250ms"), absl::Milliseconds(250));
  EXPECT_EQ(ParseDuration("5").status().message(),
            "want a duration such as 250ms or 1s, got \"5\"");
  EXPECT_FALSE(ParseDuration("inf").ok());
  EXPECT_EQ(*ParseDuration("inf", Infinite::kAllow), absl::InfiniteDuration());
  EXPECT_EQ(*ParseDuration("1s", absl::Seconds(1), absl::Seconds(2)),
            absl::Seconds(1));
  EXPECT_EQ(ParseDuration("3s", absl::Seconds(1), absl::Seconds(2))
                .status()
                .message(),
            "must be in [1s, 2s], got 3s");
}

TEST(FlagValuesTest, ForFlagNamesTheFlagAndKeepsTheCode) {
  const absl::Status status =
      ForFlag("timeout", absl::InvalidArgumentError("must be positive"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "--timeout: must be positive");
}

}  // namespace
}  // namespace tailgate::flags
