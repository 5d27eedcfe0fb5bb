#include "server/process/termination_signals.h"

#include <signal.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

// Each case runs in a death-test child, so blocking signals there leaves
// the test runner alone.

TEST(TerminationSignalsDeathTest, FirstSignalIsReturnedNotDelivered) {
  EXPECT_EXIT(
      {
        BlockTerminationSignals();
        kill(getpid(), SIGTERM);
        _exit(AwaitTerminationSignal() == SIGTERM ? 7 : 1);
      },
      testing::ExitedWithCode(7), "");
}

TEST(TerminationSignalsDeathTest, SighupIsReportedAndDoesNotTerminate) {
  EXPECT_EXIT(
      {
        BlockTerminationSignals();
        kill(getpid(), SIGHUP);
        kill(getpid(), SIGTERM);
        int hangups = 0;
        const int signal = AwaitTerminationSignal([&hangups] { ++hangups; });
        _exit(signal == SIGTERM && hangups == 1 ? 7 : 1);
      },
      testing::ExitedWithCode(7), "");
}

TEST(TerminationSignalsDeathTest, SighupDuringTheDrainDoesNotExit) {
  EXPECT_EXIT(
      {
        BlockTerminationSignals();
        kill(getpid(), SIGTERM);
        AwaitTerminationSignal();
        ExitOnNextTerminationSignal();
        kill(getpid(), SIGHUP);
        kill(getpid(), SIGINT);
        pause();  // only the SIGINT ends it, as 130
      },
      testing::ExitedWithCode(130), "");
}

TEST(TerminationSignalsDeathTest, SecondSigtermExitsWith143) {
  EXPECT_EXIT(
      {
        BlockTerminationSignals();
        kill(getpid(), SIGTERM);
        AwaitTerminationSignal();
        ExitOnNextTerminationSignal();
        kill(getpid(), SIGTERM);
        pause();  // the watcher thread exits the process
      },
      testing::ExitedWithCode(143), "");
}

TEST(TerminationSignalsDeathTest, SecondSigintExitsWith130) {
  EXPECT_EXIT(
      {
        BlockTerminationSignals();
        kill(getpid(), SIGINT);
        AwaitTerminationSignal();
        ExitOnNextTerminationSignal();
        kill(getpid(), SIGINT);
        pause();
      },
      testing::ExitedWithCode(130), "");
}

}  // namespace
}  // namespace tailgate::server
