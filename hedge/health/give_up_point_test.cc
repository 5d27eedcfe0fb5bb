#include "hedge/health/give_up_point.h"

#include <cmath>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

absl::Time At(int ms) { return absl::UnixEpoch() + absl::Milliseconds(ms); }

constexpr absl::Duration kNoCap = absl::Hours(1);

// factor 3, min 20 ms, max 500 ms.
GiveUpConfig Config(double factor = 3) {
  return GiveUpConfig{factor, absl::Milliseconds(20), absl::Milliseconds(500)};
}

// `n` answers of `latency_ms`, one every `every_ms` from `from_ms`.
void Answers(GiveUpPoint& point, int n, int latency_ms, int from_ms,
             int every_ms = 1) {
  for (int i = 0; i < n; ++i) {
    point.ObserveAnswer(At(from_ms + i * every_ms),
                        absl::Milliseconds(latency_ms));
  }
}

// The prior the tests pass: far from min and max.
constexpr absl::Duration kPrior = absl::Milliseconds(100);

// The point in milliseconds (-1 when off).
double PointMs(const GiveUpPoint& point, int ms, absl::Duration cap = kNoCap,
               absl::Duration prior = kPrior) {
  const std::optional<absl::Duration> at = point.PointFor(At(ms), prior, cap);
  return at.has_value() ? absl::ToDoubleMilliseconds(*at) : -1;
}

// Quantiles are read off log-spaced buckets (within 2 %).
void ExpectAbout(double got_ms, double want_ms) {
  EXPECT_NEAR(got_ms, want_ms, want_ms * 0.03) << "want about " << want_ms;
}

TEST(GiveUpPointTest, ThePriorUntilTheWindowHoldsMinSamples) {
  GiveUpPoint point(Config());
  EXPECT_EQ(PointMs(point, 0), 100);
  // The prior is clamped to [min, max] too.
  EXPECT_EQ(PointMs(point, 0, kNoCap, absl::Milliseconds(5)), 20);
  EXPECT_EQ(PointMs(point, 0, kNoCap, absl::Seconds(5)), 500);
  EXPECT_FALSE(point.learned());
  Answers(point, GiveUpPoint::kMinSamples - 1, 10, 0);
  EXPECT_EQ(PointMs(point, 100), 100);
  EXPECT_FALSE(point.learned());
  Answers(point, 1, 10, 100);
  ExpectAbout(PointMs(point, 200), 30);
  EXPECT_TRUE(point.learned());
}

TEST(GiveUpPointTest, FactorTimesP99ClampedToMinAndMax) {
  GiveUpPoint middle(Config());
  Answers(middle, 97, 10, 0);
  Answers(middle, 3, 40, 97);  // three in a hundred: p99 is 40 ms
  ExpectAbout(PointMs(middle, 100), 3 * 40);

  GiveUpPoint fast(Config());
  Answers(fast, 50, 2, 0);  // 3 * 2 ms is below min
  EXPECT_EQ(PointMs(fast, 100), 20);

  GiveUpPoint slow(Config());
  Answers(slow, 50, 300, 0);  // 3 * 300 ms is above max
  EXPECT_EQ(PointMs(slow, 100), 500);

  GiveUpPoint wider(Config(/*factor=*/5));
  Answers(wider, 50, 10, 0);
  ExpectAbout(PointMs(wider, 100), 50);
}

TEST(GiveUpPointTest, RecomputedAtMostOncePerRefreshInterval) {
  GiveUpPoint point(Config());
  Answers(point, 50, 10, 0);
  ExpectAbout(PointMs(point, 100), 30);
  Answers(point, 100, 100, 101);  // much slower from now on
  const int refresh_ms = absl::ToInt64Milliseconds(GiveUpPoint::kRefresh);
  ExpectAbout(PointMs(point, 100 + refresh_ms - 1), 30);
  ExpectAbout(PointMs(point, 100 + refresh_ms), 300);
}

TEST(GiveUpPointTest, AnswersThatLeftTheWindowNoLongerCount) {
  // Answers stop (every replica hangs, or the traffic went away): once the
  // last of them has left the window the point is the prior again, not
  // what the old answers said.
  GiveUpPoint point(Config());
  Answers(point, 50, 10, 0);
  ExpectAbout(PointMs(point, 100), 30);
  const int window_ms = absl::ToInt64Milliseconds(GiveUpPoint::kWindow);
  EXPECT_EQ(PointMs(point, 100 + 2 * window_ms), 100);
  EXPECT_FALSE(point.learned());
}

TEST(GiveUpPointTest, FactorZeroIsOff) {
  GiveUpPoint point(Config(/*factor=*/0));
  EXPECT_EQ(point.PointFor(At(0), kPrior, kNoCap), std::nullopt);
  Answers(point, 100, 10, 0);
  EXPECT_EQ(point.PointFor(At(1000), kPrior, kNoCap), std::nullopt);
}

TEST(GiveUpPointTest, CapBoundsThePoint) {
  GiveUpPoint point(Config());
  // The prior capped.
  EXPECT_EQ(PointMs(point, 0, absl::Milliseconds(50)), 50);
  Answers(point, 50, 10, 0);
  ExpectAbout(PointMs(point, 100, absl::Milliseconds(200)), 30);
  EXPECT_EQ(PointMs(point, 100, absl::Milliseconds(25)), 25);
  // The cap is the read's own limit: it wins over `min` too.
  EXPECT_EQ(PointMs(point, 100, absl::Milliseconds(5)), 5);
}

TEST(GiveUpPointTest, UniformSlowdownRaisesThePointWithinTheWindow) {
  // A second of 10 ms answers, then every replica slows down to 50 ms
  // together: the fallbacks' answers are slow too, and they are samples.
  GiveUpPoint point(Config());
  Answers(point, 200, 10, 0, /*every_ms=*/5);
  ExpectAbout(PointMs(point, 1000), 30);
  // Given up at 30 ms, every 50 ms answer would be lost. The answers that
  // come anyway (from attempts not given up) raise the point within a
  // refresh or two, far inside the window...
  Answers(point, 20, 50, 1000, /*every_ms=*/5);
  ExpectAbout(PointMs(point, 1100), 150);
  // ...and it stays there while they are slow, old fast answers gone.
  Answers(point, 2000, 50, 1100, /*every_ms=*/5);
  ExpectAbout(PointMs(point, 11100), 150);
  EXPECT_TRUE(point.learned());
}

TEST(GiveUpConfigTest, ValidationNamesTheFieldAtEachEdge) {
  const auto field_of = [](const GiveUpConfig& config) -> std::string {
    const absl::Status status = ValidateGiveUpConfig(config);
    if (status.ok()) return "ok";
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    return std::string(status.message().substr(0, status.message().find(':')));
  };
  const absl::Duration ms = absl::Milliseconds(1);
  const absl::Duration ns = absl::Nanoseconds(1);
  const absl::Duration hour = absl::Hours(1);
  EXPECT_EQ(field_of(GiveUpConfig{}), "ok");

  EXPECT_EQ(field_of({0, ms, ms}), "ok");  // off
  EXPECT_EQ(field_of({1, ms, ms}), "ok");
  EXPECT_EQ(field_of({100, ms, ms}), "ok");
  for (double bad : {-1.0, 0.5, 0.999, 100.001, std::nan("")}) {
    EXPECT_EQ(field_of({bad, ms, ms}), "give_up_factor") << bad;
  }

  EXPECT_EQ(field_of({3, ns, ns}), "ok");
  EXPECT_EQ(field_of({3, hour, hour}), "ok");
  EXPECT_EQ(field_of({3, absl::ZeroDuration(), ms}), "give_up_min");
  EXPECT_EQ(field_of({3, -ms, ms}), "give_up_min");
  EXPECT_EQ(field_of({3, hour + ns, hour + ns}), "give_up_min");

  EXPECT_EQ(field_of({3, ms, ms - ns}), "give_up_max");
  EXPECT_EQ(field_of({3, ms, hour + ns}), "give_up_max");
  EXPECT_EQ(ValidateGiveUpConfig({3, absl::Milliseconds(20), ms}).message(),
            "give_up_max: must be in [give_up_min (20ms), 1h], got 1ms");
}

}  // namespace
}  // namespace tailgate::hedge
