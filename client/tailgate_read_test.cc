// Runs the tailgate_read binary against an in-process fake sidecar and
// checks what a user sees: stdout, stderr and the exit code.

#include <stdlib.h>

#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/exit_codes.h"
#include "client/testing/fake_sidecar.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/process/child_process.h"

namespace tailgate::cli {
namespace {

using testing::ChildOptions;
using testing::ChildResult;
using ::testing::ElementsAre;
using testing::FakeSidecar;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Output;
using testing::RunToExit;
using ::testing::StartsWith;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs client/tailgate_read (a data dependency, relative to the runfiles
// root the test starts in) with `args`; stdout goes to `stdout_path`, or is
// captured into Outcome::out.
Outcome RunTailgateRead(const std::vector<std::string>& args,
                        const std::string& stdout_path = "",
                        const std::string& stdin_path = "") {
  ChildOptions options;
  if (!stdin_path.empty()) options.stdin_from = Output::File(stdin_path);
  options.argv = {"client/tailgate_read"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.stdout_to =
      stdout_path.empty() ? Output::Capture() : Output::File(stdout_path);
  options.stderr_to = Output::Capture();
  Outcome outcome;
  absl::StatusOr<ChildResult> run =
      RunToExit(std::move(options), absl::Seconds(60));
  if (!run.ok()) {
    ADD_FAILURE() << run.status();
    return outcome;
  }
  outcome.exit_code = run->exit_code;
  outcome.out = run->stdout_text;
  outcome.err = run->stderr_text;
  return outcome;
}

int LineCount(const std::string& text) {
  return static_cast<int>(
      std::vector<std::string>(absl::StrSplit(text, '\n', absl::SkipEmpty()))
          .size());
}

class TailgateReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_ = FakeSidecar::Start();
    ASSERT_NE(fake_, nullptr);
  }

  Outcome Read(std::vector<std::string> args) {
    args.insert(args.begin(), absl::StrCat("--target=", fake_->target()));
    return RunTailgateRead(args);
  }

  // `many` with `args` (options and paths), stdin holding `input`.
  Outcome Many(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), absl::StrCat("--target=", fake_->target()));
    const std::string stdin_path =
        absl::StrCat(getenv("TEST_TMPDIR"), "/many-stdin");
    std::ofstream(stdin_path, std::ios::binary | std::ios::trunc) << input;
    return RunTailgateRead(args, "", stdin_path);
  }

  Outcome Admin(std::vector<std::string> args) {
    args.insert(args.begin(), absl::StrCat("--admin=", fake_->target()));
    return RunTailgateRead(args);
  }

  std::unique_ptr<FakeSidecar> fake_;
};

TEST_F(TailgateReadTest, WritesTheBodyToStdoutAndExitsZero) {
  const Outcome run = Read({"/hello"});
  EXPECT_EQ(run.exit_code, kExitOk);
  EXPECT_EQ(run.out, "hello from /hello\n");
  EXPECT_THAT(run.err, IsEmpty());
}

TEST_F(TailgateReadTest, BodyIsByteExact) {
  const Outcome run = Read({"/binary"});
  EXPECT_EQ(run.exit_code, kExitOk);
  ASSERT_EQ(run.out.size(), 256u);
  for (int byte = 0; byte < 256; ++byte) {
    EXPECT_EQ(static_cast<unsigned char>(run.out[byte]), byte);
  }
}

TEST_F(TailgateReadTest, Http404ExitsWithTheClientErrorCode) {
  const Outcome run = Read({"/status/404"});
  EXPECT_EQ(run.exit_code, kExitHttp4xx);
  EXPECT_EQ(run.out, "status 404\n");  // curl-like: the body still goes out
}

TEST_F(TailgateReadTest, Http503ExitsWithTheServerErrorCode) {
  const Outcome run = Read({"/status/503"});
  EXPECT_EQ(run.exit_code, kExitHttp5xx);
  EXPECT_EQ(run.out, "status 503\n");
}

TEST_F(TailgateReadTest, Http304IsSuccess) {
  EXPECT_EQ(Read({"/status/304"}).exit_code, kExitOk);
}

TEST_F(TailgateReadTest, VerbosePrintsRequestStatusHeadersAndTrace) {
  const Outcome run = Read({"-v", "-H", "Accept: text/plain", "/hedged"});
  EXPECT_EQ(run.exit_code, kExitOk);
  EXPECT_EQ(run.out, "hedged\n");
  EXPECT_THAT(run.err, HasSubstr("> GET /hedged\n> Accept: text/plain\n"));
  EXPECT_THAT(run.err, HasSubstr("< HTTP 200\n< content-type: text/plain\n"
                                 "< x-fake: yes\n"));
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat("* trace attempts=2 hedged=true "
                                              "hedge_won=true replica=",
                                              testing::kHedgeReplica,
                                              " latency=12.5ms\n")));
}

TEST_F(TailgateReadTest, OptionsBecomeTheDescriptor) {
  const Outcome run =
      Read({"--head", "-H", "Accept: text/plain", "-HX-Trace:abc", "--upstream",
            "eu", "--hedge_delay=15ms", "/p/a%2Fb?q=1"});
  EXPECT_EQ(run.exit_code, kExitOk);
  EXPECT_EQ(run.out, "");  // HEAD
  const v1::ReadRequest sent = fake_->last_request();
  EXPECT_EQ(sent.path(), "/p/a%2Fb?q=1");
  EXPECT_EQ(sent.method(), v1::METHOD_HEAD);
  ASSERT_EQ(sent.headers_size(), 2);
  EXPECT_EQ(sent.headers(0).name(), "Accept");
  EXPECT_EQ(sent.headers(0).value(), "text/plain");
  EXPECT_EQ(sent.headers(1).name(), "X-Trace");
  EXPECT_EQ(sent.headers(1).value(), "abc");
  EXPECT_EQ(sent.upstream(), "eu");
  EXPECT_FALSE(sent.hedge().disable());
  EXPECT_EQ(sent.hedge().delay().nanos(), 15000000);
}

TEST_F(TailgateReadTest, NoHedgeDisablesHedging) {
  EXPECT_EQ(Read({"--no-hedge", "/x"}).exit_code, kExitOk);
  EXPECT_TRUE(fake_->last_request().hedge().disable());
}

struct ErrorCase {
  const char* code_name;
  int exit_code;
};

class ErrorExitCodeTest : public TailgateReadTest,
                          public ::testing::WithParamInterface<ErrorCase> {};

TEST_P(ErrorExitCodeTest, EachGrpcErrorClassHasItsExitCode) {
  const Outcome run = Read({absl::StrCat("/grpc/", GetParam().code_name)});
  EXPECT_EQ(run.exit_code, GetParam().exit_code);
  EXPECT_THAT(run.out, IsEmpty());
  EXPECT_EQ(run.err, absl::StrCat("tailgate_read: ", GetParam().code_name,
                                  ": fake ", GetParam().code_name, "\n"));
}

INSTANTIATE_TEST_SUITE_P(
    AllClasses, ErrorExitCodeTest,
    ::testing::Values(ErrorCase{"INVALID_ARGUMENT", kExitInvalidArgument},
                      ErrorCase{"NOT_FOUND", kExitNotFound},
                      ErrorCase{"RESOURCE_EXHAUSTED", kExitResourceExhausted},
                      ErrorCase{"UNAVAILABLE", kExitUnavailable},
                      ErrorCase{"DEADLINE_EXCEEDED", kExitDeadlineExceeded},
                      ErrorCase{"CANCELLED", kExitCancelled},
                      ErrorCase{"INTERNAL", kExitOtherError},
                      ErrorCase{"UNIMPLEMENTED", kExitOtherError}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) {
      return std::string(info.param.code_name);
    });

TEST_F(TailgateReadTest, DeadlineEndsAHangingRead) {
  const Outcome run = Read({"--deadline=200ms", "/hang"});
  EXPECT_EQ(run.exit_code, kExitDeadlineExceeded);
  EXPECT_THAT(run.err, StartsWith("tailgate_read: DEADLINE_EXCEEDED: "));
  EXPECT_EQ(LineCount(run.err), 1);
}

TEST_F(TailgateReadTest, UnreachableSidecarIsUnavailable) {
  std::string closed_target;
  {
    std::unique_ptr<FakeSidecar> gone = FakeSidecar::Start();
    closed_target = gone->target();
  }
  const Outcome run =
      RunTailgateRead({absl::StrCat("--target=", closed_target), "/x"});
  EXPECT_EQ(run.exit_code, kExitUnavailable);
  EXPECT_THAT(run.err, StartsWith("tailgate_read: UNAVAILABLE: "));
}

TEST_F(TailgateReadTest, UnwritableStdoutIsAnOutputError) {
  const Outcome run = RunTailgateRead(
      {absl::StrCat("--target=", fake_->target()), "/hello"}, "/dev/full");
  EXPECT_EQ(run.exit_code, kExitOutputError);
  EXPECT_THAT(run.err, StartsWith("tailgate_read: cannot write to stdout"));
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST_F(TailgateReadTest, ManyPrintsALinePerReadAsItCompletes) {
  const Outcome run = Many({"many", "/a", "/binary", "/status/204"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.err, IsEmpty());
  // The fake answers the last read first: lines in completion order.
  EXPECT_THAT(Lines(run.out), ElementsAre("2 204 11 /status/204",
                                          "1 200 256 /binary", "0 200 14 /a"));
}

TEST_F(TailgateReadTest, ManyReadsPathsFromStdinWithTheReadOptions) {
  const Outcome run = Many({"--head", "-H", "Accept: text/plain",
                            "--upstream=eu", "--max_in_flight=3", "many"},
                           "/one\r\n\n  \n/two\n/three");
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(Lines(run.out),
              ElementsAre("2 200 0 /three", "1 200 0 /two", "0 200 0 /one"));
  const v1::ReadManyRequest sent = fake_->last_read_many();
  EXPECT_EQ(sent.max_in_flight(), 3u);
  ASSERT_EQ(sent.reads_size(), 3);
  for (const v1::ReadRequest& read : sent.reads()) {
    EXPECT_EQ(read.method(), v1::METHOD_HEAD);
    EXPECT_EQ(read.upstream(), "eu");
    ASSERT_EQ(read.headers_size(), 1);
    EXPECT_EQ(read.headers(0).name(), "Accept");
  }
}

TEST_F(TailgateReadTest, ManyVerboseAddsTheTraceAndBodyTheBody) {
  const Outcome run = Many({"-v", "--body", "many", "/hedged", "/q\"x"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(
      Lines(run.out),
      ElementsAre(absl::StrCat("1 200 16 /q\"x attempts=1 hedged=false "
                               "hedge_won=false replica=",
                               testing::kPrimaryReplica,
                               " latency=3ms body=\"hello from /q\\\"x\\n\""),
                  absl::StrCat("0 200 7 /hedged attempts=2 hedged=true "
                               "hedge_won=true replica=",
                               testing::kHedgeReplica,
                               " latency=12.5ms body=\"hedged\\n\"")));
}

TEST_F(TailgateReadTest, ManyFailedReadsFailOnlyTheirLines) {
  const Outcome run =
      Many({"many", "/ok", "/grpc/NOT_FOUND", "/status/503", "/missing-ok"});
  // The lowest failed index decides: NOT_FOUND (1), not the 503 (2).
  EXPECT_EQ(run.exit_code, kExitNotFound);
  EXPECT_THAT(run.err, IsEmpty());
  EXPECT_THAT(Lines(run.out),
              ElementsAre("3 200 23 /missing-ok", "2 503 11 /status/503",
                          "1 NOT_FOUND - /grpc/NOT_FOUND fake NOT_FOUND",
                          "0 200 15 /ok"));
}

TEST_F(TailgateReadTest, ManyExitsWithTheLowestFailedReadsCode) {
  EXPECT_EQ(Many({"many", "/status/404", "/grpc/UNAVAILABLE"}).exit_code,
            kExitHttp4xx);
  EXPECT_EQ(Many({"many", "/x", "/grpc/UNAVAILABLE", "/status/404"}).exit_code,
            kExitUnavailable);
}

TEST_F(TailgateReadTest, ManyDeadlineFailsTheCallAfterTheLinesThatCame) {
  const Outcome run = Many({"--deadline=200ms", "many", "/hang", "/fast"});
  EXPECT_EQ(run.exit_code, kExitDeadlineExceeded);
  EXPECT_THAT(Lines(run.out), ElementsAre("1 200 17 /fast"));
  EXPECT_THAT(run.err, StartsWith("tailgate_read: DEADLINE_EXCEEDED: "));
  EXPECT_EQ(LineCount(run.err), 1);
}

TEST_F(TailgateReadTest, ManyOverTheBatchLimitIsInvalidArgument) {
  std::string input;
  for (int i = 0; i <= testing::kMaxBatchReads; ++i) {
    absl::StrAppend(&input, "/k/", i, "\n");
  }
  const Outcome run = Many({"many"}, input);
  EXPECT_EQ(run.exit_code, kExitInvalidArgument);
  EXPECT_THAT(run.out, IsEmpty());
  EXPECT_THAT(run.err, StartsWith("tailgate_read: INVALID_ARGUMENT: "));
  EXPECT_THAT(run.err, HasSubstr("max_batch_reads=1000"));
}

TEST_F(TailgateReadTest, ManyOfNothingIsOk) {
  const Outcome run = Many({"many"}, "\n\n");
  EXPECT_EQ(run.exit_code, kExitOk);
  EXPECT_THAT(run.out, IsEmpty());
  EXPECT_THAT(run.err, IsEmpty());
}

TEST_F(TailgateReadTest, ManyUnwritableStdoutIsAnOutputError) {
  const Outcome run = RunTailgateRead(
      {absl::StrCat("--target=", fake_->target()), "many", "/a", "/hang"},
      "/dev/full");
  // The first line cannot be written: the /hang read is cancelled rather
  // than waited for.
  EXPECT_EQ(run.exit_code, kExitOutputError);
  EXPECT_THAT(run.err, StartsWith("tailgate_read: cannot write to stdout"));
  EXPECT_EQ(LineCount(run.err), 1);
}

TEST_F(TailgateReadTest, StatsPrintsATable) {
  const Outcome run = Admin({"stats"});
  EXPECT_EQ(run.exit_code, kExitOk);
  EXPECT_THAT(run.out, HasSubstr("requests           10\n"));
  EXPECT_THAT(run.out, HasSubstr("amplification      1.2\n"));
  EXPECT_THAT(run.out, HasSubstr(testing::kHedgeReplica));
  EXPECT_THAT(run.out, HasSubstr("probing"));
  EXPECT_THAT(run.out, HasSubstr("GIVE_UP_AFTER"));
}

TEST_F(TailgateReadTest, StatsJsonPrintsOneObject) {
  const Outcome run = Admin({"stats", "--json"});
  EXPECT_EQ(run.exit_code, kExitOk);
  EXPECT_THAT(run.out, StartsWith("{\"requests\":10,\"rejected\":1,"));
  EXPECT_THAT(run.out, HasSubstr("\"circuit\":\"half-open\""));
  EXPECT_THAT(run.out, HasSubstr("\"state\":\"probing\""));
  EXPECT_THAT(run.out, HasSubstr("\"give_up_after\":\"0.06s\""));
  EXPECT_EQ(LineCount(run.out), 1);
}

TEST_F(TailgateReadTest, MetricsPrintsThePrometheusText) {
  const Outcome run = Admin({"metrics"});
  EXPECT_EQ(run.exit_code, kExitOk);
  EXPECT_EQ(run.out, testing::kMetricsText);
}

TEST(TailgateReadAdminTest, UnreachableAdminIsUnavailable) {
  std::string closed_target;
  {
    std::unique_ptr<FakeSidecar> gone = FakeSidecar::Start();
    closed_target = gone->target();
  }
  const Outcome run =
      RunTailgateRead({absl::StrCat("--admin=", closed_target), "stats"});
  EXPECT_EQ(run.exit_code, kExitUnavailable);
}

TEST(TailgateReadHelpTest, HelpDocumentsOptionsAndExitCodes) {
  const Outcome run = RunTailgateRead({"--help"});
  EXPECT_EQ(run.exit_code, kExitOk);
  for (const char* expected :
       {"--target=ADDR", "--head", "-H 'Name: value'", "--upstream=NAME",
        "--deadline=DUR", "--no_hedge", "--hedge_delay=DUR", "-v, --verbose",
        "stats [--json]", "metrics", "many [PATH]...", "--max_in_flight=N",
        "--body", "Exit codes:", "RESOURCE_EXHAUSTED",
        "  14  DEADLINE_EXCEEDED"}) {
    EXPECT_THAT(run.out, HasSubstr(expected));
  }
}

class UsageErrorTest
    : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(UsageErrorTest, PrintsOneLineAndExitsTwo) {
  const Outcome run = RunTailgateRead(GetParam());
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.out, IsEmpty());
  EXPECT_THAT(run.err, StartsWith("tailgate_read: "));
  EXPECT_EQ(LineCount(run.err), 1) << run.err;
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, UsageErrorTest,
    ::testing::Values(std::vector<std::string>{},
                      std::vector<std::string>{"--bogus", "/x"},
                      std::vector<std::string>{"-x", "/x"},
                      std::vector<std::string>{"relative/path"},
                      std::vector<std::string>{"http://host/x"},
                      std::vector<std::string>{"/x", "/y"},
                      std::vector<std::string>{"--deadline=soon", "/x"},
                      std::vector<std::string>{"--deadline=-1s", "/x"},
                      std::vector<std::string>{"--hedge_delay=0", "/x"},
                      std::vector<std::string>{"-H", "no-colon", "/x"},
                      std::vector<std::string>{"/x", "-H"},
                      std::vector<std::string>{"--no_hedge",
                                               "--hedge_delay=5ms", "/x"},
                      std::vector<std::string>{"--head=yes", "/x"},
                      std::vector<std::string>{"--json", "/x"},
                      std::vector<std::string>{"-v", "stats"},
                      std::vector<std::string>{"--max_in_flight=0", "many"},
                      std::vector<std::string>{"--body", "/x"},
                      std::vector<std::string>{"--target=", "/x"}));

}  // namespace
}  // namespace tailgate::cli
