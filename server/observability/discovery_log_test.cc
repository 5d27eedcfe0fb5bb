#include "server/observability/discovery_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fake_clock.h"

namespace tailgate::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

absl::Time FixedNow() { return absl::FromUnixSeconds(0); }

constexpr char kName[] = "catalog.svc";

hedge::NameLookup Good(std::vector<std::string> addresses) {
  return {absl::OkStatus(), std::move(addresses)};
}
hedge::NameLookup Failed(std::vector<std::string> kept) {
  return {absl::NotFoundError("no address"), std::move(kept)};
}

// A DiscoveryLog writing to a pipe, on a fake monotonic clock.
class DiscoveryLogTest : public ::testing::Test {
 protected:
  DiscoveryLogTest() {
    EXPECT_EQ(pipe2(fds_, O_NONBLOCK), 0);
    log_ = std::make_unique<Logger>(LogFormat::kLogfmt, fds_[1], &FixedNow);
    names_ = std::make_unique<DiscoveryLog>(*log_, clock_);
  }
  ~DiscoveryLogTest() override {
    close(fds_[0]);
    close(fds_[1]);
  }

  void Look(const hedge::NameLookup& lookup, const std::string& upstream = "",
            const std::string& name = kName) {
    names_->OnNameLookup(upstream, name, lookup);
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
  std::unique_ptr<DiscoveryLog> names_;
};

TEST_F(DiscoveryLogTest, FirstAnswerLogsEveryAddressThenOnlyChanges) {
  Look(Good({"10.0.0.1", "10.0.0.2"}));
  EXPECT_THAT(Lines(), ElementsAre("level=info event=dns_replicas_changed "
                                   "upstream=\"\" name=catalog.svc "
                                   "added=10.0.0.1,10.0.0.2 removed=\"\" "
                                   "addresses=2"));
  // The same answer every 5 s: nothing.
  for (int i = 0; i < 20; ++i) {
    clock_.Advance(absl::Seconds(5));
    Look(Good({"10.0.0.1", "10.0.0.2"}));
  }
  EXPECT_THAT(Lines(), IsEmpty());
  // A move: one line at once.
  clock_.Advance(absl::Seconds(5));
  Look(Good({"10.0.0.2", "10.0.0.3"}), "blue");
  Look(Good({"10.0.0.2", "10.0.0.3"}));
  EXPECT_THAT(Lines(),
              ElementsAre("level=info event=dns_replicas_changed "
                          "upstream=blue name=catalog.svc "
                          "added=10.0.0.2,10.0.0.3 removed=\"\" addresses=2",
                          "level=info event=dns_replicas_changed "
                          "upstream=\"\" name=catalog.svc added=10.0.0.3 "
                          "removed=10.0.0.1 addresses=2"));
}

TEST_F(DiscoveryLogTest, FlappingAnswersLogOncePerIntervalAndEndOnTheLast) {
  Look(Good({"10.0.0.1"}));
  ASSERT_THAT(Lines(), SizeIs(1));
  // An answer that flips every second for a minute.
  for (int i = 1; i <= 60; ++i) {
    clock_.Advance(absl::Seconds(1));
    Look(Good({i % 2 == 1 ? "10.0.0.2" : "10.0.0.1"}));
  }
  const std::vector<std::string> lines = Lines();
  EXPECT_LE(lines.size(),
            60 / absl::ToInt64Seconds(DiscoveryLog::kChangeInterval) + 1);
  EXPECT_GE(lines.size(), 2u);
  // The minute ends on 10.0.0.1; the next lookup after the interval
  // reports where it stands relative to the last line.
  clock_.Advance(DiscoveryLog::kChangeInterval);
  Look(Good({"10.0.0.3"}));
  const std::vector<std::string> last = Lines();
  ASSERT_THAT(last, SizeIs(1));
  EXPECT_THAT(last[0], ::testing::HasSubstr("added=10.0.0.3 "));
  EXPECT_THAT(last[0], ::testing::HasSubstr(" addresses=1"));
}

TEST_F(DiscoveryLogTest, AChangeWithinTheIntervalIsLoggedAfterIt) {
  Look(Good({"10.0.0.1"}));
  ASSERT_THAT(Lines(), SizeIs(1));
  clock_.Advance(absl::Seconds(1));
  Look(Good({"10.0.0.1", "10.0.0.2"}));  // within the interval: held
  clock_.Advance(absl::Seconds(1));
  Look(Good({"10.0.0.2"}));  // still held
  EXPECT_THAT(Lines(), IsEmpty());
  clock_.Advance(DiscoveryLog::kChangeInterval);
  Look(Good({"10.0.0.2"}));  // unchanged, but not yet logged
  EXPECT_THAT(Lines(),
              ElementsAre("level=info event=dns_replicas_changed "
                          "upstream=\"\" name=catalog.svc added=10.0.0.2 "
                          "removed=10.0.0.1 addresses=1"));
  clock_.Advance(DiscoveryLog::kChangeInterval);
  Look(Good({"10.0.0.2"}));
  EXPECT_THAT(Lines(), IsEmpty());
}

TEST_F(DiscoveryLogTest, FailuresLogTheFirstThenAMinutelyReminderThenRecovery) {
  Look(Good({"10.0.0.1", "10.0.0.2"}));
  ASSERT_THAT(Lines(), SizeIs(1));
  // Failing every 5 s for 2m30s: the first, then one a minute.
  for (int i = 0; i < 30; ++i) {
    clock_.Advance(absl::Seconds(5));
    Look(Failed({"10.0.0.1", "10.0.0.2"}));
  }
  EXPECT_THAT(
      Lines(),
      ElementsAre("level=warn event=dns_lookup_failed upstream=\"\" "
                  "name=catalog.svc error=\"no address\" failures=1 kept=2",
                  "level=warn event=dns_lookup_failed upstream=\"\" "
                  "name=catalog.svc error=\"no address\" failures=13 kept=2",
                  "level=warn event=dns_lookup_failed upstream=\"\" "
                  "name=catalog.svc error=\"no address\" failures=25 "
                  "kept=2"));
  clock_.Advance(absl::Seconds(5));
  Look(Good({"10.0.0.1", "10.0.0.2"}));
  EXPECT_THAT(Lines(), ElementsAre("level=info event=dns_lookup_recovered "
                                   "upstream=\"\" name=catalog.svc "
                                   "failures=30 for=2m30s"));
  // A new run starts afresh.
  clock_.Advance(absl::Seconds(5));
  Look(Failed({"10.0.0.1", "10.0.0.2"}));
  EXPECT_THAT(Lines(), SizeIs(1));
}

TEST_F(DiscoveryLogTest, AFirstLookupThatFailsKeepsNothing) {
  Look(Failed({}));
  EXPECT_THAT(Lines(), ElementsAre("level=warn event=dns_lookup_failed "
                                   "upstream=\"\" name=catalog.svc "
                                   "error=\"no address\" failures=1 kept=0"));
}

TEST_F(DiscoveryLogTest, NamesAreTrackedApart) {
  Look(Failed({}), "", "a.svc");
  Look(Failed({}), "", "b.svc");
  Look(Failed({}), "blue", "a.svc");
  EXPECT_THAT(Lines(), SizeIs(3));
}

}  // namespace
}  // namespace tailgate::server
