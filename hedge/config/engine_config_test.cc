#include "hedge/config/engine_config.h"

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "hedge/errors/field_error.h"
#include "hedge/hygiene/replica_url.h"

namespace tailgate::hedge {
namespace {

EngineConfig Valid() {
  EngineConfig config;
  UpstreamConfig& upstream = config.upstreams.emplace_back();
  upstream.replicas =
      *hygiene::ParseReplicaList("http://127.0.0.1:1,http://127.0.0.1:2");
  return config;
}

// The field the first problem names, or "" when the config is valid.
std::string BadField(const EngineConfig& config) {
  const absl::Status status = ValidateEngineConfig(config);
  if (status.ok()) return "";
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  return ErrorField(status).value_or(
      "<no field: " + std::string(status.message()) + ">");
}

TEST(EngineConfigTest, DefaultsWithReplicasAreValid) {
  EXPECT_EQ(BadField(Valid()), "");
}

TEST(EngineConfigTest, ResponseBytesLimitIsCheckedAtBothEdges) {
  EngineConfig config = Valid();
  config.max_response_bytes = 1;
  EXPECT_EQ(BadField(config), "");
  config.max_response_bytes = kMaxResponseBytesHardCap;
  EXPECT_EQ(BadField(config), "");
  config.max_response_bytes = 0;
  EXPECT_EQ(BadField(config), "max_response_bytes");
  config.max_response_bytes = kMaxResponseBytesHardCap + 1;
  EXPECT_EQ(BadField(config), "max_response_bytes");
  EXPECT_EQ(ErrorProblem(ValidateEngineConfig(config)),
            "must be in [1, 67108864] (64 MiB), got 67108865");
}

TEST(EngineConfigTest, TimerSpinIsCheckedAtBothEdges) {
  EngineConfig config = Valid();
  config.timer_spin = absl::ZeroDuration();
  EXPECT_EQ(BadField(config), "");
  config.timer_spin = kMaxTimerSpin;
  EXPECT_EQ(BadField(config), "");
  config.timer_spin = -absl::Nanoseconds(1);
  EXPECT_EQ(BadField(config), "timer_spin");
  config.timer_spin = kMaxTimerSpin + absl::Nanoseconds(1);
  EXPECT_EQ(BadField(config), "timer_spin");
}

TEST(EngineConfigTest, TimeoutMustBePositiveAndFinite) {
  EngineConfig config = Valid();
  config.upstreams[0].hedge_delay = absl::Nanoseconds(1);
  config.timeout = absl::Nanoseconds(2);
  EXPECT_EQ(BadField(config), "");
  for (absl::Duration bad :
       {absl::ZeroDuration(), -absl::Seconds(1), absl::InfiniteDuration()}) {
    config.timeout = bad;
    EXPECT_EQ(BadField(config), "timeout");
  }
}

TEST(EngineConfigTest, HedgeDelayMustBePositiveAndUnderTheTimeout) {
  EngineConfig config = Valid();
  config.timeout = absl::Seconds(1);
  config.upstreams[0].hedge_delay = absl::Seconds(1) - absl::Nanoseconds(1);
  EXPECT_EQ(BadField(config), "");
  config.upstreams[0].hedge_delay = absl::Seconds(1);
  EXPECT_EQ(BadField(config), "hedge_delay");
  EXPECT_EQ(ErrorProblem(ValidateEngineConfig(config)),
            "must be less than timeout (1s), got 1s");
  config.upstreams[0].hedge_delay = absl::ZeroDuration();
  EXPECT_EQ(BadField(config), "hedge_delay");
}

TEST(EngineConfigTest, AdaptiveDelayBoundsAreCheckedWhenItIsOn) {
  EngineConfig config = Valid();
  config.timeout = absl::Seconds(1);
  UpstreamConfig& upstream = config.upstreams[0];
  upstream.adaptive_delay.min = absl::ZeroDuration();
  upstream.adaptive_delay.max = absl::Seconds(1);
  EXPECT_EQ(BadField(config), "");  // off: not used, not checked
  upstream.adaptive_delay.enabled = true;
  EXPECT_EQ(BadField(config), "hedge_delay_min");
  upstream.adaptive_delay.min = absl::Nanoseconds(1);
  EXPECT_EQ(BadField(config), "hedge_delay_max");
  EXPECT_EQ(ErrorProblem(ValidateEngineConfig(config)),
            "must be less than timeout (1s), got 1s");
  upstream.adaptive_delay.max = absl::Seconds(1) - absl::Nanoseconds(1);
  EXPECT_EQ(BadField(config), "");
  upstream.adaptive_delay.min = upstream.adaptive_delay.max;
  EXPECT_EQ(BadField(config), "");
  upstream.adaptive_delay.min += absl::Nanoseconds(1);
  EXPECT_EQ(BadField(config), "hedge_delay_max");
}

TEST(EngineConfigTest, PreconnectIsCheckedAtBothEdges) {
  EngineConfig config = Valid();
  for (int ok : {0, kMaxPreconnect}) {
    config.upstreams[0].preconnect = ok;
    EXPECT_EQ(BadField(config), "") << ok;
  }
  for (int bad : {-1, kMaxPreconnect + 1}) {
    config.upstreams[0].preconnect = bad;
    EXPECT_EQ(BadField(config), "preconnect") << bad;
  }
}

TEST(EngineConfigTest, ResponseHeaderLimitsMustBePositive) {
  EngineConfig config = Valid();
  config.max_response_headers = 0;
  EXPECT_EQ(BadField(config), "max_response_headers");
  config = Valid();
  config.max_response_header_bytes = 0;
  EXPECT_EQ(BadField(config), "max_response_header_bytes");
}

TEST(EngineConfigTest, PolicyValidatorsNameTheirFields) {
  EngineConfig config = Valid();
  config.upstreams[0].budget.fraction = 2;
  EXPECT_EQ(BadField(config), "hedge_fraction");
  config = Valid();
  config.upstreams[0].circuit.failure_threshold = 0;
  EXPECT_EQ(BadField(config), "failure_threshold");
  config = Valid();
  config.admission.max_attempts = 0;
  EXPECT_EQ(BadField(config), "max_attempts");
}

TEST(EngineConfigTest, UpstreamsMustExistHaveReplicasAndDistinctNames) {
  EngineConfig config = Valid();
  config.upstreams.clear();
  EXPECT_EQ(BadField(config), "upstreams");
  config = Valid();
  config.upstreams[0].replicas.clear();
  EXPECT_EQ(BadField(config), "replicas");
  config = Valid();
  config.upstreams.push_back(config.upstreams[0]);
  EXPECT_EQ(BadField(config), "upstreams");
  config.upstreams[1].name = "images";
  EXPECT_EQ(BadField(config), "");
}

TEST(EngineConfigTest, NamedUpstreamFieldsCarryTheUpstreamsName) {
  EngineConfig config = Valid();
  config.upstreams.push_back(config.upstreams[0]);
  config.upstreams[1].name = "images";
  config.upstreams[1].hedge_delay = absl::ZeroDuration();
  EXPECT_EQ(BadField(config), "upstreams.images.hedge_delay");
  config.upstreams[1].hedge_delay = absl::Milliseconds(5);
  config.upstreams[1].budget.burst = -1;
  EXPECT_EQ(BadField(config), "upstreams.images.hedge_burst");
}

}  // namespace
}  // namespace tailgate::hedge
