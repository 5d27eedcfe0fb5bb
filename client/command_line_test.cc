#include "client/command_line.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<CommandLine> Parse(std::vector<std::string> args) {
  return ParseCommandLine(args);
}

std::string ErrorOf(std::vector<std::string> args) {
  absl::StatusOr<CommandLine> line = Parse(std::move(args));
  EXPECT_EQ(line.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(line.status().message());
}

TEST(CommandLineTest, APathAloneIsAGetWithDefaults) {
  absl::StatusOr<CommandLine> line = Parse({"/index.html?q=1"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->command, Command::kRead);
  EXPECT_EQ(line->read.path, "/index.html?q=1");
  EXPECT_EQ(line->read.method, Method::kGet);
  EXPECT_EQ(line->target, "127.0.0.1:8080");
  EXPECT_EQ(line->admin, "127.0.0.1:9090");
  EXPECT_EQ(line->deadline, absl::Seconds(5));
  EXPECT_FALSE(line->verbose);
  EXPECT_FALSE(line->read.disable_hedge);
  EXPECT_EQ(line->read.hedge_delay, absl::ZeroDuration());
  EXPECT_EQ(line->read.deadline, absl::ZeroDuration());
}

TEST(CommandLineTest, EveryReadOption) {
  absl::StatusOr<CommandLine> line =
      Parse({"--target=unix:/run/t.sock", "--head", "-H", "Accept: a/b",
             "-HX-Id:  7 ", "--header=X-Long: yes", "--upstream", "eu",
             "--deadline=1.5s", "--hedge_delay", "10ms", "-v", "/p"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->target, "unix:/run/t.sock");
  EXPECT_EQ(line->read.method, Method::kHead);
  EXPECT_THAT(line->read.headers,
              ElementsAre(Header{"Accept", "a/b"}, Header{"X-Id", "7"},
                          Header{"X-Long", "yes"}));
  EXPECT_EQ(line->read.upstream, "eu");
  EXPECT_EQ(line->deadline, absl::Milliseconds(1500));
  EXPECT_EQ(line->read.hedge_delay, absl::Milliseconds(10));
  EXPECT_TRUE(line->verbose);
  EXPECT_EQ(line->read.path, "/p");
}

TEST(CommandLineTest, DashesAndUnderscoresAreInterchangeable) {
  absl::StatusOr<CommandLine> line = Parse({"--no-hedge", "/p"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_TRUE(line->read.disable_hedge);
  line = Parse({"--hedge-delay=5ms", "/p"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->read.hedge_delay, absl::Milliseconds(5));
}

TEST(CommandLineTest, OptionsMayFollowThePath) {
  absl::StatusOr<CommandLine> line = Parse({"/p", "-v"});
  ASSERT_TRUE(line.ok());
  EXPECT_TRUE(line->verbose);
}

TEST(CommandLineTest, DoubleDashEndsOptions) {
  absl::StatusOr<CommandLine> line = Parse({"--", "/-v"});
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line->read.path, "/-v");
  EXPECT_FALSE(line->verbose);
}

TEST(CommandLineTest, InfiniteDeadlineMeansNone) {
  absl::StatusOr<CommandLine> line = Parse({"--deadline=inf", "/p"});
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line->deadline, absl::InfiniteDuration());
}

TEST(CommandLineTest, AdminCommands) {
  absl::StatusOr<CommandLine> line =
      Parse({"--admin=127.0.0.1:1", "stats", "--json"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->command, Command::kStats);
  EXPECT_EQ(line->admin, "127.0.0.1:1");
  EXPECT_TRUE(line->json);
  line = Parse({"metrics", "--deadline=1s"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->command, Command::kMetrics);
}

TEST(CommandLineTest, ManyTakesPathsAndTheReadOptions) {
  absl::StatusOr<CommandLine> line =
      Parse({"--upstream=eu", "many", "/a", "-v", "/b", "--max_in_flight=8",
             "--body", "not-a-path"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->command, Command::kMany);
  // Sent as given: the sidecar fails the item of a bad path.
  EXPECT_THAT(line->paths, ElementsAre("/a", "/b", "not-a-path"));
  EXPECT_EQ(line->read.upstream, "eu");
  EXPECT_EQ(line->read.path, "");
  EXPECT_TRUE(line->verbose);
  EXPECT_TRUE(line->body);
  EXPECT_EQ(line->max_in_flight, 8u);
}

TEST(CommandLineTest, ManyWithoutPathsReadsThemFromStdin) {
  absl::StatusOr<CommandLine> line = Parse({"many"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->command, Command::kMany);
  EXPECT_TRUE(line->paths.empty());
  EXPECT_EQ(line->max_in_flight, 0u);
  EXPECT_FALSE(line->body);
}

TEST(PathsFromTextTest, OneALineWithoutBlankLinesOrCarriageReturns) {
  EXPECT_THAT(PathsFromText("/a\r\n\n \t\n/b c\n/d"),
              ElementsAre("/a", "/b c", "/d"));
  EXPECT_THAT(PathsFromText(""), ElementsAre());
  EXPECT_THAT(PathsFromText("\n\n"), ElementsAre());
}

TEST(CommandLineTest, HelpWinsOverEverythingElse) {
  for (const char* help : {"-h", "--help"}) {
    absl::StatusOr<CommandLine> line = Parse({"--bogus", help});
    ASSERT_TRUE(line.ok());
    EXPECT_EQ(line->command, Command::kHelp);
  }
}

TEST(CommandLineTest, ErrorsNameTheProblem) {
  EXPECT_THAT(ErrorOf({}), HasSubstr("missing PATH"));
  EXPECT_THAT(ErrorOf({"--bogus", "/p"}),
              HasSubstr("unknown option '--bogus'"));
  EXPECT_THAT(ErrorOf({"-vx", "/p"}), HasSubstr("unknown option '-vx'"));
  EXPECT_THAT(ErrorOf({"p"}), HasSubstr("PATH must start with '/'"));
  EXPECT_THAT(ErrorOf({"https://h/p"}), HasSubstr("origin-form"));
  EXPECT_THAT(ErrorOf({"/p", "/q"}), HasSubstr("unexpected argument '/q'"));
  EXPECT_THAT(ErrorOf({"stats", "x"}), HasSubstr("unexpected argument 'x'"));
  EXPECT_THAT(
      ErrorOf({"--deadline=fast", "/p"}),
      HasSubstr(
          "--deadline: want a duration such as 250ms or 1s, got \"fast\""));
  EXPECT_THAT(ErrorOf({"--deadline=0", "/p"}),
              HasSubstr("--deadline: must be positive"));
  EXPECT_THAT(
      ErrorOf({"--hedge_delay=inf", "/p"}),
      HasSubstr(
          "--hedge_delay: want a duration such as 250ms or 1s, got \"inf\""));
  EXPECT_THAT(ErrorOf({"-H", "NoColon", "/p"}),
              HasSubstr("-H: expected 'Name: value'"));
  EXPECT_THAT(ErrorOf({"-H", "Bad Name: v", "/p"}),
              HasSubstr("-H: header name"));
  EXPECT_THAT(ErrorOf({"-H", ": v", "/p"}), HasSubstr("-H: header name"));
  EXPECT_THAT(ErrorOf({"/p", "--upstream"}),
              HasSubstr("--upstream needs a value"));
  EXPECT_THAT(ErrorOf({"--upstream=", "/p"}),
              HasSubstr("--upstream: must not be empty"));
  EXPECT_THAT(ErrorOf({"--target=", "/p"}),
              HasSubstr("--target: must not be empty"));
  EXPECT_THAT(ErrorOf({"--verbose=1", "/p"}), HasSubstr("-v takes no value"));
  EXPECT_THAT(ErrorOf({"--no_hedge", "--hedge_delay=1ms", "/p"}),
              HasSubstr("contradict"));
  EXPECT_THAT(ErrorOf({"--json", "/p"}),
              HasSubstr("--json applies to 'stats'"));
  EXPECT_THAT(ErrorOf({"--json", "metrics"}),
              HasSubstr("--json applies to 'stats'"));
  EXPECT_THAT(ErrorOf({"-H", "A: b", "metrics"}),
              HasSubstr("-H applies to reads, not to 'metrics'"));
  EXPECT_THAT(ErrorOf({"--max_in_flight=8", "/p"}),
              HasSubstr("--max_in_flight applies to 'many' only"));
  EXPECT_THAT(ErrorOf({"--body", "stats"}),
              HasSubstr("--body applies to 'many' only"));
  EXPECT_THAT(ErrorOf({"--max_in_flight=0", "many"}),
              HasSubstr("--max_in_flight: want a positive whole number"));
  EXPECT_THAT(ErrorOf({"--max_in_flight=-1", "many"}),
              HasSubstr("--max_in_flight: want a positive whole number"));
  EXPECT_THAT(ErrorOf({"--json", "many"}),
              HasSubstr("--json applies to 'stats'"));
}

TEST(CommandLineTest, UsageListsEveryOptionAndTheExitCodes) {
  const std::string usage = UsageText();
  for (const char* expected :
       {"--target", "--head", "-H", "--upstream", "--deadline", "--no_hedge",
        "--hedge_delay", "--verbose", "--admin", "--json", "stats", "metrics",
        "many [PATH]...", "--max_in_flight=N", "--body",
        "Exit codes:", "  2   usage error"}) {
    EXPECT_THAT(usage, HasSubstr(expected));
  }
}

}  // namespace
}  // namespace tailgate::cli
