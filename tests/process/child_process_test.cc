// ChildProcess against real programs (sh, cat, sleep): where its streams
// go, its environment, waiting for a line, exit codes, and stopping one
// that ignores SIGTERM.

#include "tests/process/child_process.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::testing {
namespace {

using ::testing::HasSubstr;

ChildOptions Shell(const std::string& script) {
  ChildOptions options;
  options.argv = {"sh", "-c", script};
  return options;
}

std::string TempPath(const std::string& name) {
  const char* dir = getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

std::unique_ptr<ChildProcess> StartOrDie(ChildOptions options) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start(std::move(options));
  EXPECT_TRUE(child.ok()) << child.status();
  return child.ok() ? *std::move(child) : nullptr;
}

TEST(ChildProcessTest, CapturesStdoutAndStderrApartWithTheExitCode) {
  ChildOptions options = Shell("echo out; echo err >&2; exit 3");
  options.stdout_to = Output::Capture();
  options.stderr_to = Output::Capture();
  absl::StatusOr<ChildResult> run = RunToExit(std::move(options));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->exit_code, 3);
  EXPECT_EQ(run->stdout_text, "out\n");
  EXPECT_EQ(run->stderr_text, "err\n");
}

TEST(ChildProcessTest, EnvironmentOverridesReplaceInheritedVariables) {
  setenv("TAILGATE_CHILD_TEST", "parent", 1);
  setenv("TAILGATE_CHILD_KEPT", "kept", 1);
  ChildOptions options = Shell(
      "echo \"$TAILGATE_CHILD_TEST $TAILGATE_CHILD_KEPT\"; env | grep -c "
      "^TAILGATE_CHILD_TEST=");
  options.environment = {"TAILGATE_CHILD_TEST=child"};
  options.stdout_to = Output::Capture();
  absl::StatusOr<ChildResult> run = RunToExit(std::move(options));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->stdout_text, "child kept\n1\n");
}

TEST(ChildProcessTest, FilesTruncateOrAppendAndStdinReadsAFile) {
  const std::string input = TempPath("input.txt");
  const std::string log = TempPath("log.txt");
  std::ofstream(input) << "from a file\n";
  std::ofstream(log) << "old\n";

  ChildOptions append = Shell("cat; echo to-stderr >&2");
  append.stdin_from = Output::File(input);
  append.stdout_to = Output::AppendTo(log);
  append.stderr_to = Output::SameAsStdout();
  ASSERT_EQ(RunToExit(std::move(append))->exit_code, 0);
  EXPECT_EQ(ReadWholeFile(log), "old\nfrom a file\nto-stderr\n");

  ChildOptions truncate = Shell("echo new");
  truncate.stdout_to = Output::File(log);
  ASSERT_EQ(RunToExit(std::move(truncate))->exit_code, 0);
  EXPECT_EQ(ReadWholeFile(log), "new\n");
}

TEST(ChildProcessTest, NullStdinReadsNothing) {
  ChildOptions options = Shell("wc -c");
  options.stdin_from = Output::Null();
  options.stdout_to = Output::Capture();
  absl::StatusOr<ChildResult> run = RunToExit(std::move(options));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->stdout_text, "0\n");
}

TEST(ChildProcessTest, WaitForLineReturnsTheWholeLineOfARunningChild) {
  ChildOptions options = Shell(
      "echo starting >&2; echo 'event=listening port=4321 up' >&2; "
      "exec sleep 60");
  options.stderr_to = Output::Capture();
  std::unique_ptr<ChildProcess> child = StartOrDie(std::move(options));
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(
      child->WaitForLine(Stream::kStderr, "event=listening", absl::Seconds(10)),
      "event=listening port=4321 up");
  EXPECT_EQ(child->Wait(absl::ZeroDuration()), std::nullopt);  // still runs
  EXPECT_EQ(child->Stop(absl::Seconds(10)), 128 + SIGTERM);
  EXPECT_THAT(child->captured(Stream::kStderr), HasSubstr("starting\n"));
}

TEST(ChildProcessTest, WaitForLineGivesUpWhenTheStreamEnds) {
  ChildOptions options = Shell("printf 'first\\nlast without newline'");
  options.stdout_to = Output::Capture();
  std::unique_ptr<ChildProcess> child = StartOrDie(std::move(options));
  ASSERT_NE(child, nullptr);
  const absl::Time start = absl::Now();
  EXPECT_EQ(child->WaitForLine(Stream::kStdout, "never", absl::Seconds(30)),
            std::nullopt);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(child->WaitForLine(Stream::kStdout, "last", absl::ZeroDuration()),
            "last without newline");
  EXPECT_EQ(child->Wait(absl::Seconds(10)), 0);
}

TEST(ChildProcessTest, StopKillsAChildThatIgnoresSigtermAfterTheGrace) {
  // `trap '' TERM` is inherited by sleep across exec.
  ChildOptions options = Shell("trap '' TERM; echo ready; exec sleep 60");
  options.stdout_to = Output::Capture();
  std::unique_ptr<ChildProcess> child = StartOrDie(std::move(options));
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->WaitForLine(Stream::kStdout, "ready", absl::Seconds(10)));
  const absl::Time start = absl::Now();
  EXPECT_EQ(child->Stop(absl::Milliseconds(300)), 128 + SIGKILL);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_EQ(child->Stop(), 128 + SIGKILL);  // once stopped, the same code
}

TEST(ChildProcessTest, ChildSeesSigtermThatThisThreadBlocks) {
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &term, &old), 0);
  ChildOptions options = Shell("echo ready; exec sleep 60");
  options.stdout_to = Output::Capture();
  std::unique_ptr<ChildProcess> child = StartOrDie(std::move(options));
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->WaitForLine(Stream::kStdout, "ready", absl::Seconds(10)));
  EXPECT_EQ(child->Stop(absl::Seconds(30)), 128 + SIGTERM);
}

TEST(ChildProcessTest, RunToExitStopsAChildPastItsTimeout) {
  absl::StatusOr<ChildResult> run =
      RunToExit(Shell("exec sleep 60"), absl::Milliseconds(100));
  EXPECT_EQ(run.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(ChildProcessTest, AMissingProgramIsAnError) {
  ChildOptions options;
  options.argv = {"/nonexistent/program"};
  EXPECT_FALSE(ChildProcess::Start(std::move(options)).ok());
  EXPECT_FALSE(ChildProcess::Start(ChildOptions()).ok());
}

}  // namespace
}  // namespace tailgate::testing
