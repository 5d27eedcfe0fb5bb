#include "hedge/health/retry_after.h"

#include <optional>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

// 1994-11-06 08:49:37 UTC, the date of RFC 9110's examples.
absl::Time Example() { return absl::FromUnixSeconds(784111777); }

TEST(RetryAfterTest, DeltaSeconds) {
  EXPECT_EQ(ParseRetryAfter("5", Example()), absl::Seconds(5));
  EXPECT_EQ(ParseRetryAfter("0", Example()), absl::ZeroDuration());
  EXPECT_EQ(ParseRetryAfter(" 12 ", Example()), absl::Seconds(12));
  EXPECT_EQ(ParseRetryAfter("0029", Example()), absl::Seconds(29));
}

TEST(RetryAfterTest, LongDelaysAreCapped) {
  EXPECT_EQ(ParseRetryAfter("30", Example()), kMaxRetryAfter);
  EXPECT_EQ(ParseRetryAfter("3600", Example()), kMaxRetryAfter);
  EXPECT_EQ(ParseRetryAfter("99999999999999999999999999", Example()),
            kMaxRetryAfter);
}

TEST(RetryAfterTest, HttpDatesCountFromTheWallClock) {
  const absl::Time ten_before = Example() - absl::Seconds(10);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", ten_before),
            absl::Seconds(10));
  EXPECT_EQ(ParseRetryAfter("Sunday, 06-Nov-94 08:49:37 GMT", ten_before),
            absl::Seconds(10));
  EXPECT_EQ(ParseRetryAfter("Sun Nov  6 08:49:37 1994", ten_before),
            absl::Seconds(10));
  // Past: no wait; far ahead: the cap.
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT",
                            Example() + absl::Seconds(1)),
            absl::ZeroDuration());
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT",
                            Example() - absl::Hours(1)),
            kMaxRetryAfter);
}

TEST(RetryAfterTest, AnythingElseAsksForNothing) {
  for (const char* value :
       {"", " ", "-1", "1.5", "5s", "soon", "+5", "Sun, 06 Nov 1994"}) {
    EXPECT_EQ(ParseRetryAfter(value, Example()), std::nullopt) << value;
  }
}

}  // namespace
}  // namespace tailgate::hedge
