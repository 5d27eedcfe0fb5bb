#include "server/observability/circuit_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fake_clock.h"

namespace tailgate::server {
namespace {

using hedge::CircuitState;
using hedge::CircuitTransition;
using hedge::EjectReason;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

absl::Time FixedNow() { return absl::FromUnixSeconds(0); }

constexpr char kUrl[] = "http://a:8001";

CircuitTransition Eject(uint64_t generation, EjectReason reason,
                        absl::Duration ejected_for = absl::Seconds(1)) {
  return {CircuitState::kClosed, CircuitState::kOpen, generation, reason,
          ejected_for};
}
CircuitTransition Probing(uint64_t generation) {
  return {CircuitState::kOpen, CircuitState::kHalfOpen, generation};
}
CircuitTransition ProbeFailed(uint64_t generation, absl::Duration ejected_for) {
  return {CircuitState::kHalfOpen, CircuitState::kOpen, generation,
          EjectReason::kProbe, ejected_for};
}
CircuitTransition Serving(uint64_t generation) {
  return {CircuitState::kHalfOpen, CircuitState::kClosed, generation};
}

// A CircuitLog writing to a pipe, on a fake monotonic clock.
class CircuitLogTest : public ::testing::Test {
 protected:
  CircuitLogTest() {
    EXPECT_EQ(pipe2(fds_, O_NONBLOCK), 0);
    log_ = std::make_unique<Logger>(LogFormat::kLogfmt, fds_[1], &FixedNow);
    observer_ = std::make_unique<CircuitLog>(*log_, clock_);
  }
  ~CircuitLogTest() override {
    close(fds_[0]);
    close(fds_[1]);
  }

  void Report(const CircuitTransition& transition,
              const std::string& upstream = "",
              const std::string& replica = kUrl) {
    observer_->OnCircuitTransition(upstream, replica, transition);
  }

  // The lines written since the last call, without their "ts=... " prefix.
  std::vector<std::string> Lines() {
    std::string got;
    char buf[4096];
    for (ssize_t n; (n = read(fds_[0], buf, sizeof(buf))) > 0;) {
      got.append(buf, n);
    }
    std::vector<std::string> lines;
    for (absl::string_view line :
         absl::StrSplit(got, '\n', absl::SkipEmpty())) {
      lines.emplace_back(line.substr(line.find(' ') + 1));
    }
    return lines;
  }

  tailgate::testing::FakeClock clock_;
  int fds_[2] = {-1, -1};
  std::unique_ptr<Logger> log_;
  std::unique_ptr<CircuitLog> observer_;
};

TEST_F(CircuitLogTest, EjectionIsAWarningAndTheReturnAnInfoLine) {
  Report(Eject(3, EjectReason::kConsecutive));
  EXPECT_THAT(Lines(),
              ElementsAre("level=warn event=replica_state upstream=\"\" "
                          "replica=http://a:8001 from=serving to=ejected "
                          "reason=consecutive ejected_for=1s generation=3"));
  clock_.Advance(absl::Seconds(1));
  Report(Probing(4));
  EXPECT_THAT(Lines(), IsEmpty());
  clock_.Advance(absl::Milliseconds(250));
  Report(Serving(5));
  EXPECT_THAT(Lines(),
              ElementsAre("level=info event=replica_state upstream=\"\" "
                          "replica=http://a:8001 from=probing to=serving "
                          "for=1.25s probes_failed=0 generation=5"));
}

TEST_F(CircuitLogTest, NamesTheFailureRateReasonAndTheUpstream) {
  Report(Eject(1, EjectReason::kFailureRate, absl::Seconds(2)), "blue",
         "http://b:1");
  EXPECT_THAT(Lines(),
              ElementsAre("level=warn event=replica_state upstream=blue "
                          "replica=http://b:1 from=serving to=ejected "
                          "reason=failure_rate ejected_for=2s generation=1"));
}

// A dead replica cycles ejected -> probing -> ejected every ejection time:
// one line when it leaves, then a reminder a minute at most.
TEST_F(CircuitLogTest, ADeadReplicaGetsAReminderAMinuteNotALinePerProbe) {
  Report(Eject(1, EjectReason::kConsecutive));
  EXPECT_EQ(Lines().size(), 1u);
  uint64_t generation = 1;
  absl::Duration ejected_for = absl::Seconds(1);
  std::vector<std::string> reminders;
  // 190 s of probes failing every 10 s: 38 transitions.
  for (int i = 0; i < 19; ++i) {
    clock_.Advance(absl::Seconds(10));
    Report(Probing(++generation));
    ejected_for = std::min(2 * ejected_for, absl::Seconds(10));
    Report(ProbeFailed(++generation, ejected_for));
    for (std::string& line : Lines()) reminders.push_back(std::move(line));
  }
  EXPECT_THAT(
      reminders,
      ElementsAre("level=warn event=replica_still_ejected upstream=\"\" "
                  "replica=http://a:8001 probes_failed=6 for=1m "
                  "ejected_for=10s generation=13",
                  "level=warn event=replica_still_ejected upstream=\"\" "
                  "replica=http://a:8001 probes_failed=12 for=2m "
                  "ejected_for=10s generation=25",
                  "level=warn event=replica_still_ejected upstream=\"\" "
                  "replica=http://a:8001 probes_failed=18 for=3m "
                  "ejected_for=10s generation=37"));
  clock_.Advance(absl::Seconds(10));
  Report(Probing(++generation));
  Report(Serving(++generation));
  EXPECT_THAT(Lines(),
              ElementsAre("level=info event=replica_state upstream=\"\" "
                          "replica=http://a:8001 from=probing to=serving "
                          "for=3m20s probes_failed=19 generation=41"));
}

TEST_F(CircuitLogTest, EachReplicaHasItsOwnReminderClock) {
  Report(Eject(1, EjectReason::kConsecutive), "", "http://a:1");
  clock_.Advance(absl::Seconds(30));
  Report(Eject(1, EjectReason::kConsecutive), "", "http://b:1");
  EXPECT_EQ(Lines().size(), 2u);
  clock_.Advance(absl::Seconds(31));
  Report(Probing(2), "", "http://a:1");
  Report(ProbeFailed(3, absl::Seconds(2)), "", "http://a:1");
  Report(Probing(2), "", "http://b:1");
  Report(ProbeFailed(3, absl::Seconds(2)), "", "http://b:1");
  EXPECT_THAT(Lines(), ElementsAre("level=warn event=replica_still_ejected "
                                   "upstream=\"\" replica=http://a:1 "
                                   "probes_failed=1 for=1m1s ejected_for=2s "
                                   "generation=3"));
}

// Transitions that race may arrive out of order: a stale one changes
// nothing.
TEST_F(CircuitLogTest, IgnoresATransitionOlderThanOneAlreadySeen) {
  Report(Eject(1, EjectReason::kConsecutive));
  clock_.Advance(absl::Seconds(1));
  Report(Probing(2));
  // Its return (3) overtaken by its next ejection (4).
  Report(Eject(4, EjectReason::kFailureRate));
  Report(Serving(3));
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[1], ::testing::HasSubstr("from=serving to=ejected "
                                             "reason=failure_rate "
                                             "ejected_for=1s generation=4"));
  clock_.Advance(absl::Seconds(1));
  Report(Probing(5));
  Report(ProbeFailed(6, absl::Seconds(2)));
  EXPECT_THAT(Lines(), IsEmpty());
}

// A new breaker (the replica rejoined, or a reload changed its circuit
// settings) starts again at generation 1.
TEST_F(CircuitLogTest, GenerationOneStartsAfresh) {
  Report(Eject(7, EjectReason::kConsecutive));
  EXPECT_EQ(Lines().size(), 1u);
  Report(Eject(1, EjectReason::kConsecutive));
  EXPECT_THAT(Lines(),
              ElementsAre("level=warn event=replica_state upstream=\"\" "
                          "replica=http://a:8001 from=serving to=ejected "
                          "reason=consecutive ejected_for=1s generation=1"));
}

// An entry forgotten after a long silence: the return line cannot say how
// long the replica was out.
TEST_F(CircuitLogTest, AReplicaFirstHeardOfWhileOutHasNoDuration) {
  Report(Probing(8), "", "http://b:1");
  clock_.Advance(absl::Seconds(1));
  Report(Serving(9), "", "http://b:1");
  EXPECT_THAT(Lines(),
              ElementsAre("level=info event=replica_state upstream=\"\" "
                          "replica=http://b:1 from=probing to=serving "
                          "generation=9"));
}

TEST_F(CircuitLogTest, ForgetsAReplicaNotHeardOfForLong) {
  Report(Eject(1, EjectReason::kConsecutive), "", "http://a:1");
  clock_.Advance(CircuitLog::kForgetAfter + absl::Seconds(1));
  // A new entry (b) prunes the quiet ones (a).
  Report(Eject(1, EjectReason::kConsecutive), "", "http://b:1");
  Report(Probing(2), "", "http://a:1");
  Report(Serving(3), "", "http://a:1");
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2],
            "level=info event=replica_state upstream=\"\" "
            "replica=http://a:1 from=probing to=serving generation=3");
}

hedge::BackOffChange BackedOff(int status, absl::Duration retry_after) {
  return {true, status, retry_after, absl::ZeroDuration()};
}
hedge::BackOffChange BackOffEnded(absl::Duration lasted) {
  return {false, 0, absl::ZeroDuration(), lasted};
}

TEST_F(CircuitLogTest, ABackOffIsALineAsItBeginsAndOneAsItEnds) {
  observer_->OnReplicaBackOff("", kUrl, BackedOff(503, absl::Seconds(5)));
  EXPECT_THAT(Lines(),
              ElementsAre("level=warn event=replica_backed_off upstream=\"\" "
                          "replica=http://a:8001 status=503 retry_after=5s"));
  clock_.Advance(absl::Seconds(7));
  observer_->OnReplicaBackOff("", kUrl, BackOffEnded(absl::Seconds(7)));
  EXPECT_THAT(Lines(), ElementsAre("level=info event=replica_back_off_ended "
                                   "upstream=\"\" replica=http://a:8001 "
                                   "for=7s"));
}

// A replica that asks for a second at a time: a pair of lines a minute at
// most, the next one counting those left out.
TEST_F(CircuitLogTest, BackOffsWithinAMinuteOfTheLastLineAreCounted) {
  observer_->OnReplicaBackOff("blue", kUrl, BackedOff(429, absl::Seconds(1)));
  clock_.Advance(absl::Seconds(1));
  observer_->OnReplicaBackOff("blue", kUrl, BackOffEnded(absl::Seconds(1)));
  EXPECT_EQ(Lines().size(), 2u);
  for (int i = 0; i < 29; ++i) {
    clock_.Advance(absl::Seconds(1));
    observer_->OnReplicaBackOff("blue", kUrl, BackedOff(429, absl::Seconds(1)));
    clock_.Advance(absl::Seconds(1));
    observer_->OnReplicaBackOff("blue", kUrl, BackOffEnded(absl::Seconds(1)));
  }
  EXPECT_THAT(Lines(), IsEmpty());
  // Another replica has its own clock.
  observer_->OnReplicaBackOff("blue", "http://b:1",
                              BackedOff(429, absl::Seconds(2)));
  EXPECT_EQ(Lines().size(), 1u);
  clock_.Advance(absl::Seconds(1));  // a minute after the first line
  observer_->OnReplicaBackOff("blue", kUrl, BackedOff(429, absl::Seconds(1)));
  EXPECT_THAT(Lines(),
              ElementsAre("level=warn event=replica_backed_off upstream=blue "
                          "replica=http://a:8001 status=429 retry_after=1s "
                          "back_offs_unlogged=29"));
  clock_.Advance(absl::Seconds(3));
  observer_->OnReplicaBackOff("blue", kUrl, BackOffEnded(absl::Seconds(3)));
  EXPECT_THAT(Lines(), ElementsAre("level=info event=replica_back_off_ended "
                                   "upstream=blue replica=http://a:8001 "
                                   "for=3s"));
}

TEST_F(CircuitLogTest, AnEndWithNoBeginHeardIsNotLogged) {
  observer_->OnReplicaBackOff("", kUrl, BackOffEnded(absl::Seconds(1)));
  EXPECT_THAT(Lines(), IsEmpty());
}

}  // namespace
}  // namespace tailgate::server
